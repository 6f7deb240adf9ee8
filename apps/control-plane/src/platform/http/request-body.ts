import { fieldErrors, jsonTextDepth, MAX_JSON_DEPTH, ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { z } from 'zod';

/** Default largest JSON body the control plane reads (memory, executions, registrations). */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** The shape of the errors raw-body rejects with (http-errors, with raw-body's `type`). */
interface RawBodyError extends Error {
  type?: string;
  status?: number;
}

/**
 * A 400 about the body as a whole; `errors` names `(body)`, as every invalid body of either app
 * lists its failing fields.
 */
function invalidBody(detail: string, message: string, resolution?: string): ProblemError {
  return new ProblemError('invalid_request', detail, {
    resolution,
    extensions: { errors: [{ field: '(body)', message }] },
  });
}

/** The body's declared length, when the request declares one raw-body can hold it to. */
function declaredLength(ctx: Context): number | undefined {
  const header = ctx.get('content-length');
  return /^\d+$/.test(header) ? Number(header) : undefined;
}

/**
 * Reads the raw request body as UTF-8 text with raw-body, refusing more than `limit` bytes both by
 * Content-Length (before reading a byte) and by counted bytes (for chunked bodies). A refused body
 * is answered with `Connection: close` and the rest is drained, so a client still sending reads
 * the 413 instead of a reset. A client that goes away in the middle of its upload is a client
 * abort, not a server failure: it gets a 400 (that nobody will read) and no error log.
 */
export async function readBodyText(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<string> {
  try {
    return await getRawBody(ctx.req, { length: declaredLength(ctx), limit, encoding: 'utf-8' });
  } catch (error) {
    const type = (error as RawBodyError).type;
    if (type === 'entity.too.large') {
      ctx.req.resume();
      const declared = declaredLength(ctx);
      throw new ProblemError(
        'payload_too_large',
        declared !== undefined && declared > limit
          ? `The body is ${declared} bytes; the limit is ${limit} bytes.`
          : `The body exceeds the limit of ${limit} bytes.`,
        { headers: { Connection: 'close' } },
      );
    }
    // Aborted while reading, or before reading began (the stream is then no longer readable).
    if (type === 'request.aborted' || (type === 'stream.not.readable' && !ctx.req.complete)) {
      throw new ProblemError(
        'invalid_request',
        'The client closed the connection before sending the whole body.',
      );
    }
    if (type === 'request.size.invalid') {
      throw new ProblemError('invalid_request', 'The body is shorter or longer than its Content-Length.');
    }
    throw error;
  }
}

/**
 * Reads and parses a JSON body; an empty body reads as undefined. Malformed JSON, another content
 * type, and JSON nested deeper than MAX_JSON_DEPTH are 400 invalid_request (see parseJsonText).
 */
export async function readJsonBody(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  return parseJsonText(ctx, await readBodyText(ctx, limit));
}

/**
 * Parses a body already read as text (a route that must keep the exact text, such as one checking
 * a signature over it), with the checks every JSON body gets: an empty body reads as undefined;
 * another content type, JSON nested deeper than MAX_JSON_DEPTH and malformed JSON are 400
 * invalid_request. The depth is counted on the text before JSON.parse: a few thousand levels fit
 * in 10 KB, parse fine, and then overflow the stack of whatever walks the value recursively
 * (validators, storage checks, serialisers).
 */
export function parseJsonText(ctx: Context, text: string): unknown {
  if (text.trim() === '') return undefined;
  const type = ctx.get('content-type');
  if (type && !/json/i.test(type)) {
    throw invalidBody(`Send the body as application/json (got ${type}).`, 'not application/json');
  }
  const depth = jsonTextDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw invalidBody(
      `The JSON body is nested ${depth} levels deep; the limit is ${MAX_JSON_DEPTH} levels of objects and arrays.`,
      `nested deeper than ${MAX_JSON_DEPTH} levels`,
      `Send JSON nested at most ${MAX_JSON_DEPTH} levels deep.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidBody(`The body is not valid JSON: ${(error as Error).message}`, 'not valid JSON');
  }
}

/**
 * Validates a value against a schema; failures become 400 invalid_request with an `errors` list
 * naming each field in the one spelling both apps use (`reasoners[0].id`, `(body)`).
 */
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
