import { createServer } from 'node:net';
import { ID_PATTERN } from '@switchyard/shared';
import {
  createScratchDatabase,
  type Database,
  databaseKind,
  migrateLatest,
  openDatabase,
  type TestDatabase,
} from '@switchyard/shared/db';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import {
  createWebhookDispatcher,
  createWebhookService,
  enqueueWebhookDelivery,
  type WebhookSettings,
  webhookSettings,
} from '../src/modules/webhooks/index.ts';
import type { Clock } from '../src/platform/clock.ts';
import { systemClock } from '../src/platform/clock.ts';
import { defaultSettings } from '../src/platform/config/load-config.ts';
import { createInProcessEventBus } from '../src/platform/events/index.ts';
import { manualClock } from './helpers/clock.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { type Answer, startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.ts';

/**
 * Webhook delivery (content/concepts/webhooks.md): real receivers on 127.0.0.1, a real database, the
 * dispatcher's own claim/lease/retry loop. Time is a manual clock the tests move, so backoff is observed in
 * the recorded attempt times, never by waiting.
 */

let handle: TestDatabase;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await handle.close();
});

/** The default settings, with loopback receivers allowed (they are on 127.0.0.1). */
function settingsWith(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    ...defaultSettings(webhookSettings),
    webhookAllowHttp: true,
    webhookAllowPrivateNetworks: true,
    ...overrides,
  };
}

/** Log lines at warn and above, parsed. */
function captureLog() {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

let replicas = 0;

function dispatcherFor(
  options: { clock?: Clock; settings?: WebhookSettings; db?: Database; metrics?: Registry } = {},
) {
  const { log, lines } = captureLog();
  const dispatcher = createWebhookDispatcher({
    db: options.db ?? handle.db,
    events: createInProcessEventBus(),
    clock: options.clock,
    log,
    settings: options.settings ?? settingsWith(),
    replicaId: `test-replica-${++replicas}`,
    metrics: options.metrics,
  });
  cleanups.push(() => dispatcher.stop());
  return { dispatcher, logLines: lines };
}

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(options);
  cleanups.push(() => started.close());
  return started;
}

let executions = 0;

/** Enqueues a delivery as the executions module does when an execution finishes. */
async function enqueue(
  url: string,
  options: { secret?: string; headers?: Record<string, string>; now: Date; db?: Database },
) {
  const executionId = `exec_delivery_test_${++executions}`;
  const payload = {
    event: 'execution.completed',
    execution_id: executionId,
    workflow_id: 'run_test',
    run_id: 'run_test',
    status: 'succeeded',
    target: 'hello-agent.summarize',
    type: 'reasoner',
    duration_ms: 14,
    result: { summary: 'Short.', words: ['é', '✓'] },
  };
  const deliveryId = await enqueueWebhookDelivery(options.db ?? handle.db, {
    executionId,
    event: 'execution.completed',
    webhook: { url, secret: options.secret, headers: options.headers ?? {} },
    payload,
    now: options.now,
  });
  return { executionId, deliveryId, payload };
}

/** The delivery history as the API shows it (through the service the routes use). */
async function history(executionId: string, db: Database = handle.db) {
  const service = createWebhookService({ db, executionExists: async () => true, wake: () => {} });
  return service.history(executionId);
}

describe('webhook delivery', () => {
  it('delivers the first time, signed, with the delivery id and timestamp in the body and the headers', async () => {
    const clock = manualClock();
    const hook = await receiver({ secret: 's3cret', now: clock.now });
    const { dispatcher } = dispatcherFor({ clock });
    const { executionId, deliveryId, payload } = await enqueue(hook.url, {
      secret: 's3cret',
      headers: { 'X-Tenant': 'acme' },
      now: new Date(clock.now()),
    });
    expect(deliveryId).toMatch(ID_PATTERN);
    expect(deliveryId).toMatch(/^whd_/);

    await dispatcher.runOnce();

    expect(hook.received).toHaveLength(1);
    const [got] = hook.received;
    expect(got!.signatureValid).toBe(true);
    expect(got!.fresh).toBe(true);
    expect(got!.status).toBe(204);
    const timestamp = new Date(clock.now()).toISOString();
    expect(got!.body).toEqual({ ...payload, delivery_id: deliveryId, timestamp });
    // Compact JSON, serialised once: the bytes the signature covers.
    expect(got!.rawBody.toString('utf8')).toBe(JSON.stringify(got!.body));
    expect(got!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'execution.completed',
      'x-service-delivery-id': deliveryId,
      'x-service-timestamp': timestamp,
      'x-service-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      'x-tenant': 'acme',
      'user-agent': expect.stringMatching(/^Switchyard-Webhooks\/\d+\.\d+\.\d+/),
    });

    const [record] = await history(executionId);
    expect(record!.delivery).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
      lastError: null,
    });
    expect(record!.attempts).toEqual([
      {
        attempt: 1,
        manual: false,
        startedAt: timestamp,
        durationMs: expect.any(Number),
        statusCode: 204,
        error: null,
        responseBody: '',
      },
    ]);
  });

  it('sends no signature without a secret, and a receiver expecting one refuses it', async () => {
    const clock = manualClock();
    const open = await receiver({ now: clock.now });
    const strict = await receiver({ secret: 'expected', now: clock.now });
    const { dispatcher } = dispatcherFor({ clock, settings: settingsWith({ webhookMaxAttempts: 1 }) });
    await enqueue(open.url, { now: new Date(clock.now()) });
    const forged = await enqueue(strict.url, { secret: 'wrong-secret', now: new Date(clock.now()) });
    await dispatcher.runOnce();
    expect(open.received[0]!.headers['x-service-signature']).toBeUndefined();
    expect(open.received[0]!.status).toBe(204);
    expect(strict.received[0]!.signatureValid).toBe(false);
    const [record] = await history(forged.executionId);
    expect(record!.delivery).toMatchObject({ status: 'dead', lastStatusCode: 401 });
  });

  it('retries a receiver that fails twice, with backoff 1 s then 2 s, and then delivers', async () => {
    const clock = manualClock();
    const hook = await receiver({
      secret: 'k',
      now: clock.now,
      answer: (n): Answer =>
        n <= 2 ? { status: 503, body: `{"error":"busy ${n}"}` } : { status: 200, body: 'ok' },
    });
    const { dispatcher } = dispatcherFor({ clock });
    const { executionId, deliveryId } = await enqueue(hook.url, { secret: 'k', now: new Date(clock.now()) });
    const t0 = clock.now();

    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(1);
    let [record] = await history(executionId);
    expect(record!.delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: 503,
      lastError: 'the receiver answered 503',
      nextAttemptAt: new Date(t0 + 1000).toISOString(),
    });

    // Not due yet: nothing is sent early.
    clock.advance(999);
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(1);

    clock.advance(1);
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(2);
    [record] = await history(executionId);
    expect(record!.delivery.nextAttemptAt).toBe(new Date(t0 + 1000 + 2000).toISOString());

    clock.advance(1999);
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(2);
    clock.advance(1);
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(3);

    [record] = await history(executionId);
    expect(record!.delivery).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
    });
    expect(record!.attempts.map((a) => [a.attempt, a.statusCode, a.responseBody])).toEqual([
      [1, 503, '{"error":"busy 1"}'],
      [2, 503, '{"error":"busy 2"}'],
      [3, 200, 'ok'],
    ]);
    expect(record!.attempts.map((a) => Date.parse(a.startedAt) - t0)).toEqual([0, 1000, 3000]);
    // Every attempt: the same delivery id, its own timestamp, a valid signature over its own bytes.
    expect(hook.received.map((r) => r.body!.delivery_id)).toEqual([deliveryId, deliveryId, deliveryId]);
    expect(new Set(hook.received.map((r) => r.body!.timestamp)).size).toBe(3);
    expect(hook.received.every((r) => r.signatureValid && r.fresh)).toBe(true);
    expect(hook.received.map((r) => r.replay)).toEqual([false, false, false]);
  });

  it('caps the backoff at webhook_max_backoff', async () => {
    const clock = manualClock();
    const hook = await receiver({ answer: () => ({ status: 500 }) });
    const settings = settingsWith({
      webhookMaxAttempts: 5,
      webhookInitialBackoffMs: 1000,
      webhookMaxBackoffMs: 3000,
    });
    const { dispatcher } = dispatcherFor({ clock, settings });
    const { executionId } = await enqueue(hook.url, { now: new Date(clock.now()) });
    const t0 = clock.now();
    for (let i = 0; i < 5; i++) {
      await dispatcher.runOnce();
      clock.advance(3000);
    }
    const [record] = await history(executionId);
    expect(record!.attempts.map((a) => Date.parse(a.startedAt) - t0)).toEqual([0, 3000, 6000, 9000, 12000]);
    expect(record!.delivery.status).toBe('dead');
    // 1 s, 2 s, then 3 s (not 4 s) between attempts, read from the times the row was due again.
    expect(hook.received).toHaveLength(5);
  });

  it('dead-letters a delivery after webhook_max_attempts failures, with a warning and metrics', async () => {
    const clock = manualClock();
    const metrics = new Registry();
    const hook = await receiver({ answer: () => ({ status: 500, body: 'down' }) });
    const { dispatcher, logLines } = dispatcherFor({ clock, metrics });
    const { executionId, deliveryId } = await enqueue(hook.url, { now: new Date(clock.now()) });
    for (let i = 0; i < 3; i++) {
      await dispatcher.runOnce();
      clock.advance(5000);
    }
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(3);
    const [record] = await history(executionId);
    expect(record!.delivery).toMatchObject({
      status: 'dead',
      attempts: 3,
      nextAttemptAt: null,
      lastStatusCode: 500,
    });
    expect(record!.delivery.deadAt).toEqual(expect.any(String));
    expect(logLines).toContainEqual(
      expect.objectContaining({
        level: 40,
        delivery_id: deliveryId,
        msg: 'webhook delivery dead-lettered after 3 attempts',
      }),
    );
    const text = await metrics.metrics();
    expect(text).toMatch(/service_webhook_attempts_total\{result="failure"\} 3/);
    expect(text).toMatch(/service_webhook_deliveries_total\{outcome="dead"\} 1/);
    expect(text).toMatch(/service_webhook_dead_letters \d+/);
    expect(Number(/service_webhook_dead_letters (\d+)/.exec(text)![1])).toBeGreaterThanOrEqual(1);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const clock = manualClock();
    const elsewhere = await receiver();
    const hook = await receiver({ answer: () => ({ status: 302, headers: { Location: elsewhere.url } }) });
    const { dispatcher } = dispatcherFor({ clock, settings: settingsWith({ webhookMaxAttempts: 1 }) });
    const { executionId } = await enqueue(hook.url, { now: new Date(clock.now()) });
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    const [record] = await history(executionId);
    expect(record!.attempts[0]).toMatchObject({
      statusCode: 302,
      error: `redirect (302 to ${elsewhere.url}) not followed; webhooks must answer 2xx`,
    });
    expect(record!.delivery.status).toBe('dead');
  });

  it('ends an attempt at webhook_timeout when the receiver never answers', async () => {
    const clock = manualClock();
    const hook = await receiver({ answer: () => 'hang' });
    const { dispatcher } = dispatcherFor({ clock, settings: settingsWith({ webhookTimeoutMs: 150 }) });
    const { executionId } = await enqueue(hook.url, { now: new Date(clock.now()) });
    await dispatcher.runOnce();
    const [record] = await history(executionId);
    expect(record!.attempts[0]).toMatchObject({
      statusCode: null,
      error: 'timed out after 150 ms',
      responseBody: null,
    });
    expect(record!.delivery).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('records a refused connection as a failed attempt', async () => {
    const clock = manualClock();
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    const { dispatcher } = dispatcherFor({ clock });
    const { executionId } = await enqueue(`http://127.0.0.1:${port}/hook`, { now: new Date(clock.now()) });
    await dispatcher.runOnce();
    const [record] = await history(executionId);
    expect(record!.attempts[0]).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('keeps at most 16 KB of the answer, in whole UTF-8 characters, without NUL', async () => {
    const clock = manualClock();
    const big = await receiver({ answer: () => ({ status: 200, body: 'a'.repeat(20_000) }) });
    const wide = await receiver({ answer: () => ({ status: 500, body: 'é'.repeat(10_000) }) });
    const odd = await receiver({ answer: () => ({ status: 200, body: `x${'€'.repeat(6000)}` }) });
    const nul = await receiver({ answer: () => ({ status: 200, body: 'a\u0000b' }) });
    const { dispatcher } = dispatcherFor({ clock });
    const ids = [];
    for (const hook of [big, wide, odd, nul])
      ids.push((await enqueue(hook.url, { now: new Date(clock.now()) })).executionId);
    await dispatcher.runOnce();
    const bodies = [];
    for (const id of ids) bodies.push((await history(id))[0]!.attempts[0]!.responseBody!);
    expect(bodies[0]).toBe('a'.repeat(16_384));
    expect(bodies[1]).toBe('é'.repeat(8192)); // 2 bytes each: exactly 16,384 bytes
    // 1 + 3 × 5461 = 16,384 bytes: the character cut at the limit is left out, not mangled.
    expect(bodies[2]).toBe(`x${'€'.repeat(5461)}`);
    expect(Buffer.byteLength(bodies[2]!)).toBe(16_384);
    expect(bodies[3]).toBe('a\uFFFDb');
  });

  it('refuses to connect to a private address when private networks are not allowed (checked again at delivery)', async () => {
    const clock = manualClock();
    const hook = await receiver();
    const { dispatcher } = dispatcherFor({
      clock,
      settings: settingsWith({ webhookAllowPrivateNetworks: false, webhookMaxAttempts: 1 }),
    });
    // As if a name had resolved to a public address at submission and to these by delivery time.
    const literal = await enqueue(hook.url, { now: new Date(clock.now()) });
    const named = await enqueue(hook.url.replace('127.0.0.1', 'localhost'), { now: new Date(clock.now()) });
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(0);
    for (const { executionId } of [literal, named]) {
      const [record] = await history(executionId);
      expect(record!.attempts[0]!.error).toMatch(/is not allowed/);
      expect(record!.delivery.status).toBe('dead');
    }
  });

  it('delivers a row left delivering by a crashed replica once its lease has expired, not before', async () => {
    const clock = manualClock();
    const hook = await receiver();
    const { dispatcher } = dispatcherFor({ clock });
    const { executionId, deliveryId } = await enqueue(hook.url, { now: new Date(clock.now()) });
    // What a replica that claimed the row and then died leaves behind.
    await handle
      .db('webhook_deliveries')
      .where({ delivery_id: deliveryId })
      .update({
        status: 'delivering',
        leased_by: 'crashed-replica',
        lease_expires_at: new Date(clock.now() + 15_000),
      });
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(0);
    clock.advance(15_000);
    await dispatcher.runOnce();
    expect(hook.received).toHaveLength(1);
    const [record] = await history(executionId);
    expect(record!.delivery).toMatchObject({ status: 'delivered', attempts: 1, leasedBy: null });
  });

  it('runs by itself once started: woken through the event bus, retried by its timer', async () => {
    const hook = await receiver({ answer: (n): Answer => (n === 1 ? { status: 503 } : { status: 204 }) });
    const settings = settingsWith({ webhookInitialBackoffMs: 20, webhookMaxBackoffMs: 40 });
    const { dispatcher } = dispatcherFor({ clock: systemClock, settings });
    dispatcher.start();
    const { executionId } = await enqueue(hook.url, { now: new Date() });
    dispatcher.wake();
    await hook.waitFor(2);
    // stop() waits for the attempt in flight to be recorded.
    await dispatcher.stop();
    const [record] = await history(executionId);
    expect(record!.delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(record!.attempts.map((a) => a.statusCode)).toEqual([503, 204]);
  });

  it('hands back claimed rows it has not started when it stops', async () => {
    const hook = await receiver({ answer: () => 'hang' });
    const settings = settingsWith({ webhookWorkers: 1, webhookTimeoutMs: 300 });
    const { dispatcher } = dispatcherFor({ clock: systemClock, settings });
    const enqueued = [];
    for (let i = 0; i < 3; i++) enqueued.push(await enqueue(hook.url, { now: new Date() }));
    dispatcher.start();
    await hook.waitFor(1);
    await dispatcher.stop();
    const rows = await handle
      .db('webhook_deliveries')
      .whereIn(
        'delivery_id',
        enqueued.map((e) => e.deliveryId),
      )
      .select('status', 'leased_by', 'attempts');
    // One attempt ran (and timed out); the two waiting in memory went back to the table.
    expect(rows.filter((r) => r.attempts === 1)).toHaveLength(1);
    expect(rows.every((r) => r.status === 'pending' && r.leased_by === null)).toBe(true);
    expect(hook.received).toHaveLength(1);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('two replicas on one PostgreSQL', () => {
  it('never deliver one attempt twice', async () => {
    const scratch = await createScratchDatabase(process.env.DATABASE_URL!);
    const first = await openDatabase({ url: scratch.url, poolMax: 5 });
    const second = await openDatabase({ url: scratch.url, poolMax: 5 });
    cleanups.push(async () => {
      await first.destroy();
      await second.destroy();
      await scratch.drop();
    });
    expect(databaseKind(first)).toBe('postgres');
    await migrateLatest(first, controlPlaneMigrations);
    const hook = await receiver();
    const settings = settingsWith({ webhookWorkers: 4, webhookQueueSize: 8 });
    const a = dispatcherFor({ db: first, settings }).dispatcher;
    const b = dispatcherFor({ db: second, settings }).dispatcher;
    const ids = new Set<string>();
    for (let i = 0; i < 60; i++)
      ids.add((await enqueue(hook.url, { now: new Date(), db: first })).deliveryId);

    await Promise.all([a.runOnce(), b.runOnce()]);

    const delivered = hook.received.map((r) => r.body!.delivery_id as string);
    expect(delivered).toHaveLength(60);
    expect(new Set(delivered)).toEqual(ids);
    const attempts = await first('webhook_attempts').count({ n: '*' }).first();
    expect(Number(attempts!.n)).toBe(60);
    const statuses = await first('webhook_deliveries').select('status').groupBy('status').count({ n: '*' });
    expect(statuses).toEqual([{ status: 'delivered', n: 60 }]);
  });
});
