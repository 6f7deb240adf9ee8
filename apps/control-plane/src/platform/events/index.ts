import type { Logger } from '../logger.ts';
import { createInProcessEventBus, type EventBus } from './event-bus.ts';
import { createPostgresEventBus } from './postgres-event-bus.ts';

export * from './event-bus.ts';
export * from './event-log.ts';
export * from './postgres-event-bus.ts';

/**
 * The bus a server should use: LISTEN/NOTIFY on PostgreSQL so replicas see each other's events,
 * in-process on the embedded database (PGlite serves a single process, so there is no one else).
 */
export function createEventBusFor(databaseUrl: string | undefined, log: Logger): EventBus {
  const onHandlerError = (error: unknown, topic: string) =>
    log.error({ err: error, topic }, 'event handler failed');
  return databaseUrl
    ? createPostgresEventBus(databaseUrl, { log, onHandlerError })
    : createInProcessEventBus({ onHandlerError });
}
