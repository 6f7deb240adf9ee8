import pg from 'pg';
import { createLogger, type Logger } from '../logger.ts';
import { deliver, type EventBus, type HandlerErrorSink } from './event-bus.ts';

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
export const NOTIFY_PAYLOAD_LIMIT = 7999;

export interface PostgresEventBusOptions {
  /** Prefix of the NOTIFY channel names, so several deployments can share a server. */
  channelPrefix?: string;
  /** First delay before reconnecting the LISTEN connection; doubles up to `maxReconnectDelayMs`. */
  reconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  onHandlerError?: HandlerErrorSink;
  /** Reports connection trouble of the LISTEN connection (it reconnects on its own). */
  onConnectionError?: (error: unknown) => void;
  /** Where handler and connection failures go when no sink above is given. */
  log?: Logger;
}

/** The PostgreSQL bus, with a way to wait until every subscribed topic is really listened to. */
export interface PostgresEventBus extends EventBus {
  /** Resolves once the LISTEN connection is up and LISTENs on every topic subscribed so far. */
  listening(): Promise<void>;
}

const TOPIC = /^[a-z][a-z0-9_]{0,40}$/;

/**
 * A bus over PostgreSQL LISTEN/NOTIFY, so that every replica sharing the database sees every
 * event. One dedicated `pg` Client holds the LISTENs (a pooled connection would drop them when
 * returned to the pool) and reconnects with backoff when the server goes away; events published
 * while it is down are lost, which is why consumers treat events as hints and read state from
 * the database. Publishing goes through a tiny pool so a slow listener never blocks a publisher.
 * Events published by this process come back through LISTEN like everyone else's, so local
 * subscribers are not called twice.
 */
export function createPostgresEventBus(url: string, options: PostgresEventBusOptions = {}): PostgresEventBus {
  const prefix = options.channelPrefix ?? 'switchyard_';
  const firstDelay = options.reconnectDelayMs ?? 100;
  const maxDelay = options.maxReconnectDelayMs ?? 5000;
  const log = options.log ?? createLogger();
  const reportConnection =
    options.onConnectionError ?? ((error: unknown) => log.error({ err: error }, 'event bus connection lost'));

  const onHandlerError: HandlerErrorSink | undefined =
    options.onHandlerError ?? ((error, topic) => log.error({ err: error, topic }, 'event handler failed'));
  const publisher = new pg.Pool({ connectionString: url, max: 2 });
  // An idle pooled client that dies must not crash the process; the next query reconnects.
  publisher.on('error', () => {});

  const topics = new Map<string, Set<(event: Record<string, unknown>) => void>>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let delay = firstDelay;
  let retryTimer: NodeJS.Timeout | undefined;
  // LISTEN/UNLISTEN statements run one at a time on the one client, in order.
  let queue: Promise<void> = Promise.resolve();

  function channelOf(topic: string): string {
    if (!TOPIC.test(topic)) throw new Error(`invalid event topic "${topic}" (use a-z, 0-9 and _)`);
    return `${prefix}${topic}`;
  }

  function onNotification(message: pg.Notification): void {
    if (!message.channel.startsWith(prefix)) return;
    const topic = message.channel.slice(prefix.length);
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(message.payload ?? 'null');
    } catch {
      return; // someone else's NOTIFY on our channel; not ours to decode
    }
    if (typeof event !== 'object' || event === null) return;
    const handlers = topics.get(topic);
    if (!handlers) return;
    for (const handler of [...handlers]) {
      deliver(new Set([handler]), topic, structuredClone(event), onHandlerError);
    }
  }

  function scheduleReconnect(): void {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      connect().catch(() => {});
    }, delay);
    retryTimer.unref();
    delay = Math.min(delay * 2, maxDelay);
  }

  function connect(): Promise<void> {
    if (connecting) return connecting;
    connecting = (async () => {
      const next = new pg.Client({ connectionString: url });
      const lost = (error?: unknown) => {
        if (client !== next) return;
        client = undefined;
        connecting = undefined;
        next.removeAllListeners('notification');
        next.end().catch(() => {});
        if (closed) return;
        reportConnection(error ?? new Error('LISTEN connection ended'));
        scheduleReconnect();
      };
      next.on('error', lost);
      next.on('end', () => lost());
      next.on('notification', onNotification);
      try {
        await next.connect();
        for (const topic of topics.keys()) await next.query(`LISTEN "${channelOf(topic)}"`);
      } catch (error) {
        next.end().catch(() => {});
        connecting = undefined;
        if (!closed) {
          reportConnection(error);
          scheduleReconnect();
        }
        throw error;
      }
      if (closed) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
      delay = firstDelay;
    })();
    return connecting;
  }

  function enqueue(statement: string): Promise<void> {
    queue = queue.then(async () => {
      if (closed) return;
      try {
        await connect();
        await client?.query(statement);
      } catch {
        // A failed LISTEN is repeated for every topic when the connection comes back.
      }
    });
    return queue;
  }

  return {
    async publish(topic, event) {
      if (closed) throw new Error('event bus is closed');
      const payload = JSON.stringify(event);
      if (Buffer.byteLength(payload) > NOTIFY_PAYLOAD_LIMIT) {
        throw new Error(
          `event on ${topic} is ${Buffer.byteLength(payload)} bytes; NOTIFY carries at most ${NOTIFY_PAYLOAD_LIMIT} (send an id instead)`,
        );
      }
      await publisher.query('select pg_notify($1, $2)', [channelOf(topic), payload]);
    },
    subscribe(topic, handler) {
      const channel = channelOf(topic);
      let handlers = topics.get(topic);
      if (!handlers) {
        handlers = new Set();
        topics.set(topic, handlers);
        void enqueue(`LISTEN "${channel}"`);
      }
      handlers.add(handler);
      return () => {
        const current = topics.get(topic);
        if (!current) return;
        current.delete(handler);
        if (current.size === 0) {
          topics.delete(topic);
          void enqueue(`UNLISTEN "${channel}"`);
        }
      };
    },
    async listening() {
      await queue;
      if (!client && topics.size > 0) await connect();
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      topics.clear();
      await queue.catch(() => {});
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
      await publisher.end().catch(() => {});
    },
  };
}
