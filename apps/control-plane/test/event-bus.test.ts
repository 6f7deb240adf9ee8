import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createInProcessEventBus,
  createPostgresEventBus,
  type EventBus,
  NOTIFY_PAYLOAD_LIMIT,
  type PostgresEventBus,
} from '../src/platform/events/index.ts';

function collector() {
  const received: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  return {
    received,
    handler: (event: Record<string, unknown>) => {
      received.push(event);
      for (const wake of waiters.splice(0)) wake();
    },
    async until(count: number, timeoutMs = 5000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`received ${received.length} of ${count} events`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 50);
        });
      }
    },
  };
}

describe('in-process event bus', () => {
  it('delivers each event to every subscriber of the topic, in order, as its own copy', async () => {
    const bus = createInProcessEventBus();
    const a = collector();
    const b = collector();
    const other = collector();
    bus.subscribe('nodes', a.handler);
    bus.subscribe('nodes', b.handler);
    bus.subscribe('executions', other.handler);
    const event = { type: 'node.registered', node_id: 'n', version: '1', timestamp: 't' };
    await bus.publish('nodes', event);
    await bus.publish('nodes', { ...event, version: '2' });
    expect(a.received.map((e) => e.version)).toEqual(['1', '2']);
    expect(b.received).toEqual(a.received);
    expect(other.received).toEqual([]);
    a.received[0]!.version = 'changed';
    expect(b.received[0]!.version).toBe('1');
    expect(event.version).toBe('1');
    await bus.close();
  });

  it('stops delivering after unsubscribe', async () => {
    const bus = createInProcessEventBus();
    const a = collector();
    const unsubscribe = bus.subscribe('nodes', a.handler);
    await bus.publish('nodes', { n: 1 });
    unsubscribe();
    await bus.publish('nodes', { n: 2 });
    expect(a.received).toEqual([{ n: 1 }]);
  });

  it('keeps delivering to the others when one subscriber throws', async () => {
    const failures: unknown[] = [];
    const bus = createInProcessEventBus({ onHandlerError: (error) => failures.push(error) });
    const b = collector();
    bus.subscribe('nodes', () => {
      throw new Error('bad handler');
    });
    bus.subscribe('nodes', b.handler);
    await bus.publish('nodes', { n: 1 });
    expect(b.received).toEqual([{ n: 1 }]);
    expect(failures).toHaveLength(1);
  });

  it('refuses to publish after close', async () => {
    const bus = createInProcessEventBus();
    await bus.close();
    await expect(bus.publish('nodes', {})).rejects.toThrow(/closed/);
  });
});

const databaseUrl = process.env.DATABASE_URL;

// LISTEN/NOTIFY needs a PostgreSQL server: PGlite is one process, and there the in-process bus is used.
describe.runIf(databaseUrl)('PostgreSQL LISTEN/NOTIFY event bus (needs DATABASE_URL)', () => {
  const buses: EventBus[] = [];
  // A channel prefix per test keeps parallel test files on the same server from hearing each other.
  const prefix = () => `sy_test_${randomBytes(4).toString('hex')}_`;
  const open = (channelPrefix: string, extra: Record<string, unknown> = {}): PostgresEventBus => {
    const bus = createPostgresEventBus(databaseUrl!, {
      channelPrefix,
      onConnectionError: () => {},
      ...extra,
    });
    buses.push(bus);
    return bus;
  };

  afterEach(async () => {
    for (const bus of buses.splice(0)) await bus.close();
  });

  it('delivers an event published on one bus to subscribers of another (two replicas)', async () => {
    const channelPrefix = prefix();
    const one = open(channelPrefix);
    const two = open(channelPrefix);
    const onOne = collector();
    const onTwo = collector();
    one.subscribe('nodes', onOne.handler);
    two.subscribe('nodes', onTwo.handler);
    await Promise.all([one.listening(), two.listening()]);
    const event = {
      type: 'node.status_changed',
      node_id: 'n1',
      version: '1.0.0',
      old_status: 'ready',
      new_status: 'offline',
    };
    await one.publish('nodes', event);
    await onTwo.until(1);
    await onOne.until(1);
    expect(onTwo.received).toEqual([event]);
    // Published locally, it arrives once through LISTEN, never twice.
    expect(onOne.received).toEqual([event]);
  });

  it('keeps topics apart and stops after unsubscribe', async () => {
    const channelPrefix = prefix();
    const bus = open(channelPrefix);
    const nodes = collector();
    const other = collector();
    const unsubscribe = bus.subscribe('nodes', nodes.handler);
    bus.subscribe('other', other.handler);
    await bus.listening();
    await bus.publish('other', { n: 1 });
    await other.until(1);
    unsubscribe();
    await bus.listening();
    await bus.publish('nodes', { n: 2 });
    await bus.publish('other', { n: 3 });
    await other.until(2);
    expect(nodes.received).toEqual([]);
  });

  it('refuses an event larger than a NOTIFY payload and an invalid topic', async () => {
    const bus = open(prefix());
    await expect(bus.publish('nodes', { blob: 'x'.repeat(NOTIFY_PAYLOAD_LIMIT) })).rejects.toThrow(
      /NOTIFY carries at most/,
    );
    expect(() => bus.subscribe('Bad Topic"; drop', () => {})).toThrow(/invalid event topic/);
  });

  it('reconnects and listens again after the server drops its connection', async () => {
    const channelPrefix = prefix();
    const bus = open(channelPrefix, { reconnectDelayMs: 20 });
    const received = collector();
    bus.subscribe('nodes', received.handler);
    await bus.listening();
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const killed = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where query = $1`,
        [`LISTEN "${channelPrefix}nodes"`],
      );
      expect(killed.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    // Events sent while it is down are lost by design; keep publishing until one gets through.
    for (let i = 0; i < 100 && received.received.length === 0; i++) {
      await bus.publish('nodes', { attempt: i });
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(received.received.length).toBeGreaterThan(0);
  });
});
