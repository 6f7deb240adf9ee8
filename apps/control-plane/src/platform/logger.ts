import { type DestinationStream, type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerOptions {
  /** pino level: trace, debug, info, warn, error, fatal or silent. */
  level?: string;
  /** Human-readable lines instead of JSON; meant for a developer's terminal. */
  pretty?: boolean;
}

/**
 * The app's one logger: JSON lines (one object per event, with `time`, `level`, `msg` and
 * context such as `req_id`) that log shippers read as they are. `pretty` writes one readable
 * line per event instead, for a terminal (see terminalLines).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = { name: 'control-plane', level: options.level ?? 'info' };
  if (options.pretty) return pino(settings, terminalLines());
  // Synchronous writes. pino's own default writes in the background, and when stdout's reader
  // lags (a log shipper, a busy supervisor) the exit flush skipped the chunk still being written:
  // lines were lost and `stopped` came out before lines logged ahead of it. At `info`, the
  // default, that is one write system call per request line; the sync lane bench at `info` showed
  // no difference beyond its noise (CONTRIBUTING, "How long the tests take").
  return pino(settings, pino.destination({ dest: 1, sync: true }));
}

/** A logger that writes nothing: tests and embedders that do not want output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** The fields of the `request` line (http/request-log.ts), which a terminal line shows as its message. */
const REQUEST_FIELDS = ['req_id', 'method', 'path', 'status', 'ms', 'aborted'] as const;

/** Messages start in one column whatever the level: INFO and WARN are one letter shorter than DEBUG. */
const LABEL_WIDTH = 5;

/**
 * pino-pretty set to write one line per event, `12:04:05 INFO:  POST /api/v1/nodes 201 12.3ms req=…`:
 * its default puts every field on a line of its own, six lines per request, which buried a
 * terminal under heartbeats. Other fields follow the message as one JSON object; only an error's
 * stack keeps its own lines. Written synchronously, in this thread (not a pino transport, whose
 * options cannot carry functions), so the last lines are out before the process exits.
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
      const id = log.req_id === undefined ? '' : ` req=${log.req_id}`;
      if (log[messageKey] === 'request') {
        const status = log.status ?? '-';
        const aborted = log.aborted ? ' aborted' : '';
        return printable(`${pad}${log.method} ${log.path} ${status} ${log.ms}ms${aborted}${id}`);
      }
      // The request fields are hidden from every line; any other line that has one keeps it here,
      // unless its message shows it already (`client error answered with 408`).
      const message = String(log[messageKey]);
      const extra = REQUEST_FIELDS.filter(
        (key) => key !== 'req_id' && log[key] !== undefined && !message.includes(String(log[key])),
      )
        .map((key) => ` ${key}=${JSON.stringify(log[key])}`)
        .join('');
      return printable(`${pad}${message}${extra}${id}`);
    },
  });
}

/**
 * A message with a line break or an escape sequence in it (a caller's input quoted in a message)
 * would break the one-line layout or move a terminal's cursor; pino-pretty strips them only from
 * messages it formats itself.
 */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
