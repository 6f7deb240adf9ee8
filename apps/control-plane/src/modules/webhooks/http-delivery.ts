import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { createOutboundClient, type OutboundClient, OutboundError } from '../../platform/outbound/index.ts';

/*
 * The HTTP side of a delivery attempt (execution webhooks, and the observability collector and
 * docs site, which deliver the same way) over the platform's outbound client:
 * - unless private networks are allowed, the client checks the address every connection really
 *   goes to (after DNS, so a name re-pointed at 127.0.0.1 after submission is refused: DNS
 *   rebinding);
 * - redirects are never followed, and the spec counts only a 2xx as delivered;
 * - at most 16 KB of the answer is read, without buffering whatever a receiver sends.
 */

/** At most this much of a receiver's answer is kept per attempt. */
export const RESPONSE_BODY_LIMIT = 16 * 1024;

/** Idle keep-alive connections to a receiver are kept this long for its next delivery. */
const KEEP_ALIVE_MS = 10_000;

/** The client a dispatcher delivers with: keep-alive, and public addresses only unless private networks are allowed. */
export function createDeliveryClient(allowPrivateNetworks: boolean): OutboundClient {
  return createOutboundClient({
    addresses: allowPrivateNetworks ? 'any' : 'public',
    keepAliveMs: KEEP_ALIVE_MS,
  });
}

/** What one attempt came to: a status code (any, 2xx or not) or a transport error. */
export interface SendResult {
  statusCode: number | null;
  error: string | null;
  /** At most RESPONSE_BODY_LIMIT bytes of the answer, decoded as UTF-8; null without an answer. */
  responseBody: string | null;
  durationMs: number;
}

/**
 * The kept part of an answer as text: whole UTF-8 characters only (a character cut at the limit
 * is held back), and NUL becomes U+FFFD: PostgreSQL text cannot hold NUL.
 */
function textOf(body: Buffer, truncated: boolean): string {
  const decoder = new StringDecoder('utf8');
  const text = decoder.write(body) + (truncated ? '' : decoder.end());
  return text.replaceAll('\u0000', '\uFFFD');
}

/** A transport error as one line for the attempt record. */
function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const message = e?.message || String(error);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

/**
 * POSTs `body` to `url` with `headers`, within `timeoutMs` for the whole exchange (connect, send,
 * answer head and the kept part of the body). Never throws: a failure is a result.
 */
export async function send(
  target: { url: string; headers: Record<string, string>; body: string },
  options: { timeoutMs: number; client: OutboundClient },
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  try {
    new URL(target.url);
  } catch {
    return {
      statusCode: null,
      error: `not a valid URL: ${target.url}`,
      responseBody: null,
      durationMs: elapsed(),
    };
  }
  try {
    const answer = await options.client.request(target.url, {
      method: 'POST',
      headers: target.headers,
      body: target.body,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: RESPONSE_BODY_LIMIT,
      overLimit: 'truncate',
    });
    const code = answer.status;
    let error: string | null = null;
    if (code >= 300 && code < 400) {
      const location = answer.headers.location;
      const to = typeof location === 'string' ? location : undefined;
      error = `redirect (${code}${to ? ` to ${to.slice(0, 500)}` : ''}) not followed; webhooks must answer 2xx`;
    } else if (code < 200 || code >= 300) {
      error = `the receiver answered ${code}`;
    }
    return {
      statusCode: code,
      error,
      responseBody: textOf(answer.body, answer.truncated),
      durationMs: elapsed(),
    };
  } catch (error) {
    if (!(error instanceof OutboundError)) {
      // The client fails with OutboundErrors only; anything else still ends just this attempt.
      return { statusCode: null, error: describe(error), responseBody: null, durationMs: elapsed() };
    }
    const message =
      error.kind === 'cut_off'
        ? 'the receiver closed the connection mid-answer'
        : error.kind === 'timeout'
          ? error.message
          : describe(error);
    return { statusCode: error.status, error: message, responseBody: null, durationMs: elapsed() };
  }
}
