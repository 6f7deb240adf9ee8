import { createInProcessEventBus, type EventBus } from './event-bus.ts';
import { createPostgresEventBus } from './postgres-event-bus.ts';

export * from './event-bus.ts';
export * from './node-events.ts';
export * from './postgres-event-bus.ts';

/**
 * The bus a server should use: LISTEN/NOTIFY on PostgreSQL so replicas see each other's events,
 * in-process on the embedded database (PGlite serves a single process, so there is no one else).
 */
export function createEventBusFor(databaseUrl: string | undefined): EventBus {
  return databaseUrl ? createPostgresEventBus(databaseUrl) : createInProcessEventBus();
}
