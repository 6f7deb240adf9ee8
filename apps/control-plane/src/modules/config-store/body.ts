import { ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import getRawBody from 'raw-body';

/** The shape of the errors raw-body rejects with (http-errors, with raw-body's `type`). */
interface RawBodyError extends Error {
  type?: string;
}

function invalidBody(detail: string, message: string, resolution?: string): ProblemError {
  return new ProblemError('invalid_request', detail, {
    resolution,
    extensions: { errors: [{ field: '(body)', message }] },
  });
}

/**
 * Reads a configuration text: raw bytes up to `limit` (413 by Content-Length before reading a
 * byte, or by counted bytes for a chunked body), then strict UTF-8. platform/http's readBodyText
 * decodes leniently (a bad byte becomes U+FFFD), which would store a silently altered text; a
 * configuration must come back byte for byte, so the bytes are decoded here with `fatal`.
 */
export async function readConfigText(ctx: Context, limit: number): Promise<string> {
  const type = ctx.get('content-type');
  // curl's -d sends form encoding and strips newlines from @file, which breaks YAML silently.
  if (/^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) {
    throw invalidBody(
      `The body is sent as ${type.split(';')[0]}; a configuration is sent as raw text.`,
      'form-encoded',
      "Send the text as is, e.g. curl --data-binary @config.yaml -H 'content-type: text/yaml'.",
    );
  }
  // The bytes are stored as they come: a compressed body would be kept compressed, or refused as
  // "not UTF-8", which says nothing of the cause.
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    throw invalidBody(
      `The body is sent with Content-Encoding ${encoding}; a configuration is sent uncompressed.`,
      'content-encoded',
      'Send the text as is, without Content-Encoding.',
    );
  }
  const header = ctx.get('content-length');
  const length = /^\d+$/.test(header) ? Number(header) : undefined;
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { length, limit });
  } catch (error) {
    const kind = (error as RawBodyError).type;
    if (kind === 'entity.too.large') {
      // Drained, and the connection closed after the answer, so a client still sending reads it.
      ctx.req.resume();
      throw new ProblemError(
        'payload_too_large',
        length !== undefined && length > limit
          ? `The configuration is ${length} bytes; the limit is ${limit} bytes.`
          : `The configuration exceeds the limit of ${limit} bytes.`,
        { headers: { Connection: 'close' } },
      );
    }
    if (kind === 'request.aborted' || (kind === 'stream.not.readable' && !ctx.req.complete)) {
      throw new ProblemError(
        'invalid_request',
        'The client closed the connection before sending the whole body.',
      );
    }
    if (kind === 'request.size.invalid') {
      throw new ProblemError('invalid_request', 'The body is shorter or longer than its Content-Length.');
    }
    throw error;
  }
  if (bytes.length === 0) {
    throw invalidBody('The body is empty; send the configuration text.', 'empty');
  }
  let text: string;
  try {
    // ignoreBOM keeps a leading byte-order mark, so the text reads back exactly as sent.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalidBody('The body is not UTF-8 text.', 'not UTF-8', 'Send the configuration as UTF-8.');
  }
  if (text.includes('\u0000')) {
    // PostgreSQL text cannot hold NUL, and no configuration format needs it.
    throw invalidBody('The body contains a NUL character; a configuration is text.', 'contains NUL');
  }
  return text;
}
