import type { z } from 'zod';

/**
 * One failing field of a request, as listed in a 400 problem's `errors` member. Both apps spell
 * `field` the same way: a dotted path with array indices in brackets (`reasoners[0].id`,
 * `nodes[2].execution_id`, `q`), and `(body)` for the body as a whole.
 */
export interface FieldError {
  field: string;
  message: string;
}

const PLAIN_NAME = /^[A-Za-z_$][\w$-]*$/;

/** Spells a path of keys and indices as `a.b[0].c`; odd keys are quoted (`metadata["a.b"]`). */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return '(body)';
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'string' && PLAIN_NAME.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

/** Turns zod issues into the `errors` list of a 400 problem, with paths under `prefix`. */
export function fieldErrors(error: z.ZodError, prefix: ReadonlyArray<PropertyKey> = []): FieldError[] {
  return error.issues.map((issue) => ({
    field: fieldPath([...prefix, ...issue.path]),
    message: issue.message,
  }));
}
