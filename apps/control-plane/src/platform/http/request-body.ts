import { ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import type { z } from 'zod';

/** Default largest JSON body the control plane reads (memory, executions, registrations). */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads the raw request body as text, refusing more than `limit` bytes both by Content-Length
 * (before reading) and by counted bytes (for chunked bodies that lie or omit the length).
 */
export async function readBodyText(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<string> {
  const declared = Number(ctx.get('content-length') || Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    throw new ProblemError(
      'payload_too_large',
      `The body is ${declared} bytes; the limit is ${limit} bytes.`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.resume(); // drain the rest so the connection can answer cleanly
      throw new ProblemError('payload_too_large', `The body exceeds the limit of ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads and parses a JSON body; malformed JSON is 400 invalid_request. An empty body reads as undefined. */
export async function readJsonBody(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  const type = ctx.get('content-type');
  const text = await readBodyText(ctx, limit);
  if (text.trim() === '') return undefined;
  if (type && !/json/i.test(type)) {
    throw new ProblemError('invalid_request', `Send the body as application/json (got ${type}).`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ProblemError('invalid_request', `The body is not valid JSON: ${(error as Error).message}`);
  }
}

/** One failing field of a validated input, as listed in a 400 problem's `errors` member. */
export interface FieldError {
  field: string;
  message: string;
}

/** Turns zod issues into the `errors` list of a 400 problem. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join('.') : '(body)',
    message: issue.message,
  }));
}

/** Validates a value against a schema; failures become 400 invalid_request naming each field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = 'body'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = fieldErrors(result.error);
  const summary = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  throw new ProblemError('invalid_request', `The ${what} is invalid: ${summary}`, { extensions: { errors } });
}

/** Reads a JSON body and validates it in one step. */
export async function parseJsonBody<S extends z.ZodType>(
  ctx: Context,
  schema: S,
  limit?: number,
): Promise<z.infer<S>> {
  return parseWith(schema, await readJsonBody(ctx, limit));
}
