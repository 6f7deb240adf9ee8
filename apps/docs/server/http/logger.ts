import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/**
 * The server's logger: JSON lines on stdout (one object per line, pino's format), or coloured
 * readable lines: asked for (`pretty`), or by default while developing, when stdout is a terminal
 * and NODE_ENV is not `production`.
 * Tests pass their own destination to read what was logged.
 */
export function createLogger(
  level: LevelWithSilent,
  destination?: DestinationStream,
  format: 'auto' | 'json' | 'pretty' = 'auto',
): Logger {
  const options = { name: 'docs', level };
  if (destination) return pino(options, destination);
  const readable =
    format === 'pretty' ||
    (format === 'auto' && process.stdout.isTTY && process.env.NODE_ENV !== 'production');
  if (readable) {
    return pino(options, pretty({ colorize: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
  }
  // Synchronous writes (pino's default): lines reach stdout in order and none is lost when the
  // process exits or crashes. At the default level nothing is logged per request, so this costs
  // the hot path nothing; request lines at `debug` pay one write each.
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

/**
 * An incoming request id is kept when it is a plausible id: 1 to 128 characters of letters,
 * digits and `._:@/+=-` (UUIDs, ULIDs, trace ids, the ids proxies add). Anything else could
 * forge log lines or bloat them, and is replaced.
 */
const SANE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** The request's id: a sane incoming `X-Request-ID`, otherwise a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Errors that made a request fail unexpectedly, for its log line. */
const failures = new WeakMap<ServerResponse, Error>();

/** Records the unexpected error behind a failed answer; the request's log line carries its stack. */
export function markFailed(res: ServerResponse, error: unknown): void {
  failures.set(res, error instanceof Error ? error : new Error(String(error)));
}

/**
 * Gives the request its id (the caller echoes it as `X-Request-ID`) and logs one line when the
 * response ends: method, path, status, milliseconds, id. An unexpected failure (markFailed) is an
 * `error` line with the stack; any other 5xx a `warn` line; everything else, aborted requests
 * included, a `debug` line, so `DOCS_LOG_LEVEL=debug` turns on a full access log.
 *
 * Written here rather than with pino-http, which makes two child loggers per request and
 * serialises their bindings even when the line is not logged: in the static-page profile that
 * was about 8 % of a page request's CPU time at the `info` level, where no request line is
 * written (bench/docs-api/README.md).
 */
export function trackRequest(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  onClosed?: () => void,
): string {
  const id = requestIdOf(req);
  const started = performance.now();
  // 'close' is emitted once per response; `on` spares the wrapper `once` would make per request.
  res.on('close', () => {
    onClosed?.();
    const failure = failures.get(res);
    const status = res.statusCode;
    const level = failure ? 'error' : status >= 500 ? 'warn' : 'debug';
    if (!logger.isLevelEnabled(level)) return;
    const url = req.url && req.url.length > 512 ? `${req.url.slice(0, 512)}…` : req.url;
    const line = {
      reqId: id,
      method: req.method,
      url,
      status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      ...(failure ? { err: failure } : {}),
    };
    const message = failure
      ? 'request failed'
      : res.writableFinished
        ? 'request completed'
        : 'request aborted';
    logger[level](line, message);
  });
  return id;
}
