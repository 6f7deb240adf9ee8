import { createLogger, type Logger } from '../logger.ts';

/**
 * The event bus carries small JSON events between the parts of the control plane, and between
 * replicas when they share one PostgreSQL. Subscribers of a topic receive every event published
 * on it after they subscribed, once, in publish order per publisher.
 */
export interface EventBus {
  /** Publishes one event; resolves once the bus has accepted it (not once handlers ran). */
  publish(topic: string, event: object): Promise<void>;
  /** Calls `handler` for every later event on `topic`; returns the function that unsubscribes. */
  subscribe(topic: string, handler: (event: Record<string, unknown>) => void): () => void;
  /** Stops delivering and frees connections; publishing afterwards fails. */
  close(): Promise<void>;
}

/** Where a throwing subscriber is reported, so one bad handler never stops the others. */
export type HandlerErrorSink = (error: unknown, topic: string) => void;

let fallbackLog: Logger | undefined;

/** Used when a bus was built without a sink (tests, embedders): errors still reach a log. */
const defaultSink: HandlerErrorSink = (error, topic) => {
  fallbackLog ??= createLogger();
  fallbackLog.error({ err: error, topic }, 'event handler failed');
};

/**
 * Delivers a decoded event to a set of handlers, isolating each one. Copying the set first lets a
 * handler unsubscribe itself during delivery.
 */
export function deliver(
  handlers: Set<(event: Record<string, unknown>) => void> | undefined,
  topic: string,
  event: Record<string, unknown>,
  onError: HandlerErrorSink = defaultSink,
): void {
  if (!handlers) return;
  for (const handler of [...handlers]) {
    try {
      handler(event);
    } catch (error) {
      onError(error, topic);
    }
  }
}

/**
 * The bus for one process: events reach subscribers of this process only. Right for the embedded
 * database (PGlite serves one process) and for tests. Each subscriber gets its own copy of the
 * event, as with the PostgreSQL bus where every event arrives decoded from JSON.
 */
export function createInProcessEventBus(options: { onHandlerError?: HandlerErrorSink } = {}): EventBus {
  const topics = new Map<string, Set<(event: Record<string, unknown>) => void>>();
  let closed = false;
  return {
    async publish(topic, event) {
      if (closed) throw new Error('event bus is closed');
      const text = JSON.stringify(event);
      const handlers = topics.get(topic);
      if (!handlers) return;
      for (const handler of [...handlers]) {
        deliver(new Set([handler]), topic, JSON.parse(text), options.onHandlerError);
      }
    },
    subscribe(topic, handler) {
      let handlers = topics.get(topic);
      if (!handlers) {
        handlers = new Set();
        topics.set(topic, handlers);
      }
      handlers.add(handler);
      return () => {
        handlers.delete(handler);
        if (handlers.size === 0 && topics.get(topic) === handlers) topics.delete(topic);
      };
    },
    async close() {
      closed = true;
      topics.clear();
    },
  };
}
