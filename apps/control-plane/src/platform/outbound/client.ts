import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { type AddressPolicy, checkLiteralHost, publicOnlyLookup } from './address-rule.ts';
import { OutboundError, outboundErrorOf } from './errors.ts';

/** How one outbound client connects; each caller's policy is a set of these. */
export interface OutboundClientOptions {
  /** Which addresses connections may go to (see AddressPolicy). */
  addresses: AddressPolicy;
  /** Connections kept open per origin at most; unbounded when omitted. */
  connections?: number;
  /**
   * How long an idle connection waits for the next request; 0 closes every connection once its
   * request is answered, so nothing stays open between calls.
   */
  keepAliveMs: number;
  /** Longest a TCP (and TLS) connect may take; when omitted only the request's own bound applies. */
  connectTimeoutMs?: number;
}

export interface OutboundRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /**
   * Bound on the whole exchange: connect, send, the answer's head and the part of its body that is
   * read. Without it the request runs until answered or until `signal` aborts.
   */
  timeoutMs?: number;
  /** The caller's own cancel (a sync call's deadline, an execution's cancel). */
  signal?: AbortSignal;
  /**
   * Most bytes of the answer's body read. 0 reads none: the request resolves as soon as the
   * answer's head arrives, and the connection is closed unless the answer was already complete.
   */
  maxBodyBytes: number;
  /**
   * A longer body: `truncate` keeps its first maxBodyBytes and closes the connection (the rest
   * is not needed and could be endless); `fail` throws an OutboundError of kind `too_large`.
   */
  overLimit: 'truncate' | 'fail';
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, or its first maxBodyBytes when `truncated`. */
  body: Buffer;
  truncated: boolean;
  /** From the call to the last byte read, in milliseconds (three decimals). */
  durationMs: number;
}

/** Calls other services over HTTP under one client's rules; see createOutboundClient. */
export interface OutboundClient {
  /** Resolves with any answer, 2xx or not (redirects are answers, never followed); throws OutboundError. */
  request(url: string, options: OutboundRequest): Promise<OutboundResponse>;
  /** Ends every connection at once, failing the requests still open. */
  destroy(): Promise<void>;
}

/**
 * The control plane's one way of calling out over HTTP: to agents (executions, cancels, health
 * probes, shutdown and restart notices, approval callbacks), webhook receivers, the observability
 * collector and the docs site. One undici Agent per client keeps keep-alive connections per
 * origin; undici rather than fetch: no WHATWG Request/Response and stream layer per call on the
 * hottest path of the product. Redirects are never followed: a redirect is not an answer, and
 * following it could carry an API key or a signature elsewhere.
 *
 * Every request is bounded by its own `timeoutMs` or `signal` (undici's header and body
 * timeouts are off: the async lane has no execution time limit). Failures are OutboundErrors
 * whose kind says how far the exchange got, so each caller maps them to its own outcomes.
 */
export function createOutboundClient(options: OutboundClientOptions): OutboundClient {
  const connect = connectorFor(options);
  const dispatcher = new Agent({
    headersTimeout: 0,
    bodyTimeout: 0,
    // With keep-alive off each request asks for its connection to be closed (`reset` below).
    ...(options.keepAliveMs > 0 ? { keepAliveTimeout: options.keepAliveMs } : {}),
    ...(options.connections === undefined ? {} : { connections: options.connections }),
    connect,
  });
  const closeAfterEach = options.keepAliveMs <= 0;

  return {
    async request(url, call) {
      const started = performance.now();
      const timeout = call.timeoutMs === undefined ? undefined : AbortSignal.timeout(call.timeoutMs);
      const signals = [timeout, call.signal].filter((s): s is AbortSignal => s !== undefined);
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
      const failed = (error: unknown, status: number | null) =>
        outboundErrorOf(error, {
          status,
          timedOut: timeout?.aborted === true,
          timeoutMs: call.timeoutMs,
          aborted: call.signal?.aborted === true,
        });

      let answer: Awaited<ReturnType<typeof request>>;
      try {
        answer = await request(url, {
          method: call.method,
          headers: call.headers,
          body: call.body,
          dispatcher,
          signal,
          reset: closeAfterEach,
        });
      } catch (error) {
        throw failed(error, null);
      }

      const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
      if (call.maxBodyBytes <= 0) {
        discard(answer.body);
        const status = answer.statusCode;
        return {
          status,
          headers: answer.headers,
          body: Buffer.alloc(0),
          truncated: false,
          durationMs: elapsed(),
        };
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      try {
        for await (const chunk of answer.body as AsyncIterable<Buffer>) {
          const room = call.maxBodyBytes - size;
          if (chunk.length > room) {
            if (call.overLimit === 'fail') {
              throw new OutboundError(
                'too_large',
                `the answer exceeds ${call.maxBodyBytes} bytes`,
                undefined,
                answer.statusCode,
              );
            }
            if (room > 0) chunks.push(chunk.subarray(0, room));
            size = call.maxBodyBytes;
            truncated = true;
            break;
          }
          chunks.push(chunk);
          size += chunk.length;
        }
      } catch (error) {
        discard(answer.body);
        throw error instanceof OutboundError ? error : failed(error, answer.statusCode);
      }
      // Leaving the loop early (a truncated body) destroys the stream and with it the connection.
      return {
        status: answer.statusCode,
        headers: answer.headers,
        body: Buffer.concat(chunks, size),
        truncated,
        durationMs: elapsed(),
      };
    },

    destroy() {
      return dispatcher.destroy().catch(() => {});
    },
  };
}

/** Closes an answer's body unread; the abort this raises on the stream is expected, not a failure. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

/** undici's connector, with the address policy applied to every connection it opens. */
function connectorFor(options: OutboundClientOptions): buildConnector.connector {
  const publicOnly = options.addresses === 'public';
  const base = buildConnector({
    // 0 turns undici's own connect timeout (10 s by default) off.
    timeout: options.connectTimeoutMs ?? 0,
    ...(publicOnly ? { lookup: publicOnlyLookup } : {}),
  } as buildConnector.BuildOptions);
  if (!publicOnly) return base;
  return (target, callback) => {
    // A literal address skips DNS, and with it the lookup's check: it is checked here instead.
    const refused = checkLiteralHost(target.hostname);
    if (refused) {
      callback(refused, null);
      return;
    }
    base(target, callback);
  };
}
