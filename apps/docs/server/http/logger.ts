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
  if (readable) return pino(options, terminalLines());
  // Synchronous writes (`pino.destination`'s default, not `pino()`'s): lines reach stdout in
  // order and none is lost when the process exits or crashes. At the default level nothing is
  // logged per request, so this costs the hot path nothing; request lines at `debug` pay one
  // write each.
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

/** The fields of a request's line (trackRequest), which a terminal line shows as its message. */
const REQUEST_FIELDS = ['reqId', 'method', 'url', 'status', 'ms'] as const;

/** Messages start in one column whatever the level: INFO and WARN are one letter shorter than DEBUG. */
const LABEL_WIDTH = 5;

/**
 * pino-pretty set to write one line per event, `12:04:05 DEBUG: GET /docs/ 200 1.2ms req=…`: its
 * default puts every field on a line of its own. Other fields follow the message as one JSON
 * object; only an error's stack keeps its own lines. Written synchronously, like the JSON lines,
 * so nothing is pending when the process exits.
 */
function terminalLines(): DestinationStream {
  return pretty({
    colorize: true,
    sync: true,
    singleLine: true,
    // Errors are logged as `err` (pino's serializer); an `error` field is a reason given as text.
    errorLikeObjectKeys: ['err'],
    translateTime: 'SYS:HH:MM:ss',
    ignore: ['pid', 'hostname', 'name', ...REQUEST_FIELDS].join(','),
    customPrettifiers: { time: (time) => String(time) },
    messageFormat: (log, messageKey) => {
      const label = pino.levels.labels[log.level as number] ?? '';
      const pad = ' '.repeat(Math.max(0, LABEL_WIDTH - label.length));
      const id = log.reqId === undefined ? '' : ` req=${log.reqId}`;
      const message = String(log[messageKey]);
      if (message.startsWith('request ') && log.method !== undefined) {
        // `request completed` says nothing the status does not; aborted and failed are news.
        const outcome = message === 'request completed' ? '' : ` ${message.slice('request '.length)}`;
        return printable(`${pad}${log.method} ${log.url} ${log.status} ${log.ms}ms${outcome}${id}`);
      }
      // The request fields are hidden from every line; any other line that has one keeps it here,
      // unless its message shows it already (the listening line's `url`).
      const extra = REQUEST_FIELDS.filter(
        (key) => key !== 'reqId' && log[key] !== undefined && !message.includes(String(log[key])),
      )
        .map((key) => ` ${key}=${JSON.stringify(log[key])}`)
        .join('');
      return printable(`${pad}${message}${extra}${id}`);
    },
  });
}

/**
 * A message with a line break or an escape sequence in it (a request's URL, say) would break the
 * one-line layout or move a terminal's cursor; pino-pretty strips them only from messages it
 * formats itself.
 */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
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
