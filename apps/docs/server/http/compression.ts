import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import Negotiator from 'negotiator';

/** The content codings the server sends, in its order of preference. */
export type Encoding = 'br' | 'gzip' | 'identity';
const ENCODINGS: Encoding[] = ['br', 'gzip', 'identity'];

/** negotiator 1.x takes a server preference for ties; @types/negotiator still describes 0.6. */
type EncodingNegotiator = {
  encoding(available: string[], options: { preferred: string[] }): string | undefined;
};

/**
 * Bodies smaller than this are sent as they are: below about a kilobyte the coding's own overhead
 * and the CPU spent outweigh the bytes saved (the `compression` middleware's default too).
 */
export const COMPRESSION_THRESHOLD = 1024;

/**
 * Accept-Encoding values repeat: every browser sends one of a handful. Remembering the choice per
 * distinct value saves negotiator's parse on each request, as for Accept (see http/accept.ts,
 * whose parse showed in the static-page profile); the memo is emptied when it fills so odd values
 * cannot grow it.
 */
const chosenByHeader = new Map<string, Encoding>();
const MEMO_LIMIT = 256;

/**
 * The coding to send a compressible body in, from the request's Accept-Encoding (negotiator:
 * highest q first, then the server's preference). No header means identity; when the client
 * refuses every coding including identity (`*;q=0`), identity is sent anyway, as RFC 9110
 * §12.5.3 allows, rather than failing the request.
 */
export function chooseEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  let chosen = chosenByHeader.get(header);
  if (chosen === undefined) {
    const negotiator = new Negotiator({ headers: { 'accept-encoding': header } }) as EncodingNegotiator;
    // Browsers list `gzip, deflate, br`: at equal q the server's preference (brotli) decides.
    const preferred = negotiator.encoding(ENCODINGS, { preferred: ENCODINGS });
    chosen = (preferred as Encoding | undefined) ?? 'identity';
    if (chosenByHeader.size >= MEMO_LIMIT) chosenByHeader.clear();
    chosenByHeader.set(header, chosen);
  }
  return chosen;
}

/** Text formats gain from compression; images, fonts and Pagefind's fragments are compressed already. */
export function isCompressible(contentType: string): boolean {
  return /^(text\/|application\/(json|javascript|xml|manifest\+json|[\w.+-]+\+(json|xml))\b|image\/svg\+xml)/.test(
    contentType,
  );
}

/** Adds members (`Accept-Encoding`, or `Accept, Accept-Encoding`) to Vary, keeping those already set. */
export function appendVary(res: ServerResponse, value: string): void {
  const existing = res.getHeader('Vary');
  if (existing === undefined) {
    res.setHeader('Vary', value);
    return;
  }
  const present = String(existing)
    .split(',')
    .map((member) => member.trim().toLowerCase());
  if (present.includes('*')) return;
  const missing = value
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member && !present.includes(member.toLowerCase()));
  if (missing.length > 0) res.setHeader('Vary', [String(existing), ...missing].join(', '));
}

const brotliCompressAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Compresses a file of the build once, as small as the coding allows (brotli 11, gzip 9): the
 * result is kept for the life of the server, so the one-off cost buys every later request. Runs
 * on libuv's thread pool, not the event loop.
 */
export async function compressOnce(body: Buffer, encoding: Exclude<Encoding, 'identity'>): Promise<Buffer> {
  if (encoding === 'br') {
    return brotliCompressAsync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    });
  }
  return gzipAsync(body, { level: constants.Z_BEST_COMPRESSION });
}

/** Brotli's smallest and largest window (log2 of bytes); its default is the largest, 4 MB. */
const BROTLI_MIN_WINDOW = 10;
const BROTLI_MAX_WINDOW = 24;

/**
 * Compresses an answer computed for this request (API JSON), at the fast levels compression
 * middleware uses for dynamic bodies (brotli 4, gzip 6): these are paid on every request. Brotli's
 * window is sized to the body: a window larger than the body compresses it no better, and the
 * encoder allocates and clears memory for the whole window on every call (with the default 4 MB
 * window that was a third of the cost of compressing a 2-4 KB search answer).
 */
export function compressNow(body: Buffer, encoding: Exclude<Encoding, 'identity'>): Buffer {
  if (encoding === 'br') {
    const window = Math.min(
      BROTLI_MAX_WINDOW,
      Math.max(BROTLI_MIN_WINDOW, Math.ceil(Math.log2(body.length + 16))),
    );
    return brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 4,
        [constants.BROTLI_PARAM_LGWIN]: window,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    });
  }
  return gzipSync(body, { level: 6 });
}

/**
 * Sends a complete body computed for this request, compressed when it is large enough and the
 * client accepts a coding; `Vary: Accept-Encoding` whenever the coding depended on the request.
 * `forms` keeps the body's compressed forms for a body that is sent again (a cached answer):
 * each coding is then computed once.
 */
export function endCompressed(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  contentType: string,
  forms?: Map<Encoding, Buffer>,
): void {
  let payload = body;
  if (body.length >= COMPRESSION_THRESHOLD && isCompressible(contentType)) {
    appendVary(res, 'Accept-Encoding');
    const encoding = chooseEncoding(req.headers['accept-encoding']);
    if (encoding !== 'identity') {
      let compressed = forms?.get(encoding);
      if (!compressed) {
        compressed = compressNow(body, encoding);
        forms?.set(encoding, compressed);
      }
      payload = compressed;
      res.setHeader('Content-Encoding', encoding);
    }
  }
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', payload.length);
  res.end(payload);
}
