import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/*
 * The HTTP side of a delivery attempt, on node:http/https rather than undici or fetch:
 * - request-filtering-agent is an http.Agent, and it checks the address every connection really
 *   goes to (after DNS, so a name re-pointed at 127.0.0.1 after submission is refused: DNS
 *   rebinding). fetch takes no http.Agent, and undici would need the same check rewritten by hand.
 * - node:http never follows redirects, and the spec counts only a 2xx as delivered.
 * - Reading the answer is ours to stop after 16 KB, without buffering whatever a receiver sends.
 */

/** Spec §8: at most this much of a receiver's answer is kept per attempt. */
export const RESPONSE_BODY_LIMIT = 16 * 1024;

/** The agents of one dispatcher: keep-alive, and filtering unless private networks are allowed. */
export interface DeliveryAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

export function createDeliveryAgents(allowPrivateNetworks: boolean): DeliveryAgents {
  const options = { keepAlive: true };
  const http = allowPrivateNetworks ? new HttpAgent(options) : new RequestFilteringHttpAgent(options);
  const https = allowPrivateNetworks ? new HttpsAgent(options) : new RequestFilteringHttpsAgent(options);
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
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
 * Reads at most `limit` bytes of the answer. Whole UTF-8 characters only (StringDecoder holds back
 * a character cut at the limit), and NUL becomes U+FFFD: PostgreSQL text cannot hold NUL.
 */
function readCapped(response: IncomingMessage, limit: number): Promise<string> {
  return new Promise((done, fail) => {
    const decoder = new StringDecoder('utf8');
    let text = '';
    let bytes = 0;
    const finish = () => done(text.replaceAll('\u0000', '\uFFFD'));
    response.on('data', (chunk: Buffer) => {
      const room = limit - bytes;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      bytes += part.length;
      text += decoder.write(part);
      if (bytes >= limit) {
        // The rest is not needed and could be endless; the status already says how it went.
        response.removeAllListeners('data');
        response.destroy();
        finish();
      }
    });
    response.on('end', () => {
      text += decoder.end();
      finish();
    });
    response.on('error', fail);
    // After 'end' this changes nothing (the promise is settled); before it, the answer was cut.
    response.on('close', () => fail(new Error('the receiver closed the connection mid-answer')));
  });
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
export function send(
  target: { url: string; headers: Record<string, string>; body: string },
  options: { timeoutMs: number; agents: DeliveryAgents },
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  return new Promise((done) => {
    let settled = false;
    let statusCode: number | null = null;
    const settle = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done({ ...result, durationMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      settle({ statusCode: null, error: `not a valid URL: ${target.url}`, responseBody: null });
      return;
    }
    const secure = url.protocol === 'https:';
    const request = (secure ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      agent: secure ? options.agents.https : options.agents.http,
      headers: { ...target.headers, 'Content-Length': String(Buffer.byteLength(target.body)) },
    });
    const timer = setTimeout(() => {
      const error = new Error(`timed out after ${options.timeoutMs} ms`);
      request.destroy(error);
      settle({ statusCode, error: error.message, responseBody: null });
    }, options.timeoutMs);
    request.on('error', (error) => {
      // Once the answer has begun, readCapped reports how it ends (destroying the answer after
      // 16 KB makes the request emit an error too, which must not replace the outcome).
      if (statusCode === null) settle({ statusCode, error: describe(error), responseBody: null });
    });
    request.on('response', (response) => {
      statusCode = response.statusCode ?? null;
      readCapped(response, RESPONSE_BODY_LIMIT).then(
        (responseBody) => {
          const code = response.statusCode ?? 0;
          let error: string | null = null;
          if (code >= 300 && code < 400) {
            const location = response.headers.location;
            error = `redirect (${code}${location ? ` to ${location.slice(0, 500)}` : ''}) not followed; webhooks must answer 2xx`;
          } else if (code < 200 || code >= 300) {
            error = `the receiver answered ${code}`;
          }
          settle({ statusCode, error, responseBody });
        },
        (error) => settle({ statusCode, error: describe(error), responseBody: null }),
      );
    });
    request.end(target.body);
  });
}
