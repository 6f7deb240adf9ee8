import { type Logger, pino } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** pino level: trace, debug, info, warn, error, fatal or silent. */
  level?: string;
  /** Human-readable lines instead of JSON; meant for a developer's terminal. */
  pretty?: boolean;
}

/**
 * The app's one logger: JSON lines (one object per event, with `time`, `level`, `msg` and
 * context such as `req_id`) that log shippers read as they are. `pretty` pipes them through
 * pino-pretty for a terminal.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({
    name: 'control-plane',
    level: options.level ?? 'info',
    ...(options.pretty
      ? { transport: { target: 'pino-pretty', options: { colorize: true, ignore: 'pid,hostname' } } }
      : {}),
  });
}

/** A logger that writes nothing: tests and embedders that do not want output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
