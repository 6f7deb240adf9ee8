import { type ErrorSchema, ErrorSchemaBuilder } from '@rjsf/utils';
import { ApiProblem } from '@switchyard/client';

/** One failing field of a 400 problem's `errors` member. */
export interface FieldError {
  field: string;
  message: string;
}

/** The `errors` of a problem (400 invalid_request lists each failing field); empty otherwise. */
export function problemFieldErrors(error: unknown): FieldError[] {
  if (!(error instanceof ApiProblem)) return [];
  const errors = error.problem?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter(
    (item): item is FieldError => typeof item?.field === 'string' && typeof item?.message === 'string',
  );
}

// The server spells a field as `input.a[0].b`, quoting odd keys (`input["a.b"]`).
const SEGMENT = /^(?:\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;

/** A field path's keys (`input.a[0]["x.y"]` → ["input", "a", "0", "x.y"]); undefined if it is not one. */
export function fieldSegments(field: string): string[] | undefined {
  const segments: string[] = [];
  let rest = field;
  while (rest !== '') {
    const match = SEGMENT.exec(rest);
    if (!match) return undefined;
    segments.push(match[1] ?? match[2] ?? (JSON.parse(match[3] as string) as string));
    rest = rest.slice(match[0].length);
  }
  return segments;
}

/**
 * The server's refusal of an input, placed on the form's fields: each `input.…` field becomes an
 * error of that field (`input` itself, of the form as a whole). Fields outside the input (the
 * target, a header) are not the form's: the problem message lists those.
 */
export function inputErrorSchema(errors: FieldError[]): ErrorSchema | undefined {
  const builder = new ErrorSchemaBuilder();
  let placed = 0;
  for (const { field, message } of errors) {
    const segments = fieldSegments(field);
    if (segments?.[0] !== 'input') continue;
    builder.addErrors(message, segments.slice(1));
    placed++;
  }
  return placed > 0 ? builder.ErrorSchema : undefined;
}
