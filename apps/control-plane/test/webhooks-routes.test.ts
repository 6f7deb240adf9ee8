import { createServer, type Server } from 'node:http';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import Koa from 'koa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import {
  createWebhookDispatcher,
  createWebhookService,
  enqueueWebhookDelivery,
  type WebhookSettings,
  webhookSettings,
  webhooksOpenApi,
  webhooksRouter,
} from '../src/modules/webhooks/index.ts';
import { defaultSettings } from '../src/platform/config/load-config.ts';
import { createInProcessEventBus } from '../src/platform/events/index.ts';
import { mountRouters } from '../src/platform/http/fallback.ts';
import { handleEscapedErrors, problemMiddleware } from '../src/platform/http/problem-middleware.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { createOpenApiDocument } from '../src/platform/openapi/document.ts';
import { openApiRouter } from '../src/platform/openapi/routes.ts';
import { VERSION } from '../src/platform/version.ts';
import { manualClock } from './helpers/clock.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { expectDocumented } from './helpers/openapi.ts';
import { type Answer, startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.ts';

/**
 * The operator's webhook API: delivery history, the dead-letter queue and manual retry. The
 * routes are mounted on the platform's own middleware and OpenAPI router, and every answer is
 * held to the document they publish, as call() does for the whole app.
 */

const clock = manualClock();
const log = silentLogger();
const settings: WebhookSettings = {
  ...defaultSettings(webhookSettings),
  webhookAllowHttp: true,
  webhookAllowPrivateNetworks: true,
};
let handle: TestDatabase;
let server: Server;
let base: string;
let wakes = 0;
const dispatchers: Array<{ stop(): Promise<void> }> = [];
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  const app = new Koa();
  handleEscapedErrors(app, log);
  app.use(problemMiddleware());
  const routers = [
    webhooksRouter({
      service: createWebhookService({
        db: handle.db,
        clock,
        // The executions module answers this in the app; here the table is read directly.
        executionExists: async (id) =>
          Boolean(await handle.db('executions').where({ execution_id: id }).first()),
        wake: () => {
          wakes++;
        },
      }),
    }),
    openApiRouter({
      document: () => createOpenApiDocument({ version: VERSION, paths: [webhooksOpenApi] }),
    }),
  ];
  for (const middleware of mountRouters(routers)) app.use(middleware);
  server = createServer(app.callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop();
  for (const receiver of receivers.splice(0)) await receiver.close();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  await handle.close();
});

/** A JSON request whose answer must match the published OpenAPI document. */
async function call(method: string, path: string) {
  const response = await fetch(`${base}${path}`, { method });
  const text = await response.text();
  const answer = {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
  await expectDocumented(base, method, path, answer);
  return answer;
}

let executions = 0;

/** An execution row as the executions module writes one (this file may not call that module). */
async function insertExecution(): Promise<string> {
  const id = `exec_routes_${process.pid}_${++executions}`;
  const now = new Date(clock.now());
  await handle.db('executions').insert({
    execution_id: id,
    run_id: 'run_routes',
    workflow_id: 'run_routes',
    target: 'hello-agent.summarize',
    node_id: 'hello-agent',
    function_name: 'summarize',
    function_type: 'reasoner',
    lane: 'async',
    status: 'succeeded',
    input: JSON.stringify({ text: 'x' }),
    available_at: now,
    created_at: now,
    completed_at: now,
    updated_at: now,
  });
  return id;
}

async function receiver(answer?: (n: number) => Answer): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver({ secret: 'route-secret', now: clock.now, answer });
  receivers.push(started);
  return started;
}

function dispatcher() {
  const created = createWebhookDispatcher({
    db: handle.db,
    events: createInProcessEventBus(),
    clock,
    log,
    settings,
    replicaId: `routes-replica-${dispatchers.length}`,
  });
  dispatchers.push(created);
  return created;
}

async function finishWithWebhook(url: string): Promise<{ executionId: string; deliveryId: string }> {
  const executionId = await insertExecution();
  const deliveryId = await enqueueWebhookDelivery(handle.db, {
    executionId,
    event: 'execution.completed',
    webhook: { url, secret: 'route-secret', headers: { Authorization: 'Bearer receiver-token' } },
    payload: {
      event: 'execution.completed',
      execution_id: executionId,
      status: 'succeeded',
      result: { ok: true },
    },
    now: new Date(clock.now()),
  });
  return { executionId, deliveryId };
}

/** Runs the dispatcher until the delivery is dead (three failures, moving the clock past each backoff). */
async function deliverUntilSettled(run: { runOnce(): Promise<void> }) {
  for (let i = 0; i < settings.webhookMaxAttempts; i++) {
    await run.runOnce();
    clock.advance(settings.webhookMaxBackoffMs);
  }
}

describe('GET /api/ui/v1/executions/{execution_id}/webhook/deliveries', () => {
  it('lists deliveries with their attempts, and never the secret or header values', async () => {
    const hook = await receiver((n) =>
      n === 1 ? { status: 500, body: 'try later' } : { status: 200, body: 'ok' },
    );
    const { executionId, deliveryId } = await finishWithWebhook(hook.url);
    await deliverUntilSettled(dispatcher());

    const answer = await call('GET', `/api/ui/v1/executions/${executionId}/webhook/deliveries`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      execution_id: executionId,
      deliveries: [
        expect.objectContaining({
          delivery_id: deliveryId,
          execution_id: executionId,
          event: 'execution.completed',
          url: hook.url,
          signed: true,
          header_names: ['Authorization'],
          status: 'delivered',
          attempt_count: 2,
          manual: false,
          next_attempt_at: null,
          last_status_code: 200,
          last_error: null,
          delivered_at: expect.stringMatching(/Z$/),
          dead_at: null,
          attempts: [
            expect.objectContaining({
              attempt: 1,
              manual: false,
              status_code: 500,
              error: 'the receiver answered 500',
              response_body: 'try later',
            }),
            expect.objectContaining({
              attempt: 2,
              manual: false,
              status_code: 200,
              error: null,
              response_body: 'ok',
            }),
          ],
        }),
      ],
    });
    const text = JSON.stringify(answer.body);
    expect(text).not.toContain('route-secret');
    expect(text).not.toContain('receiver-token');
  });

  it('answers an empty list for an execution without a webhook', async () => {
    const executionId = await insertExecution();
    const answer = await call('GET', `/api/ui/v1/executions/${executionId}/webhook/deliveries`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ execution_id: executionId, deliveries: [] });
  });

  it('answers 404 not_found for an unknown execution and for ids that could never exist', async () => {
    const unknown = await call('GET', '/api/ui/v1/executions/exec_nobody/webhook/deliveries');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({
      code: 'not_found',
      detail: 'Execution "exec_nobody" does not exist.',
    });
    for (const id of ['exec%20space', 'x'.repeat(129), '%00', '-dash-first']) {
      const answer = await call('GET', `/api/ui/v1/executions/${id}/webhook/deliveries`);
      expect(answer.status, id).toBe(404);
      expect(answer.body.detail, id).toMatch(/not a valid execution id/);
    }
  });
});

describe('POST /api/ui/v1/executions/{execution_id}/webhook/retry', () => {
  it('re-delivers a dead-lettered delivery once the receiver is fixed: dead → DLQ → retry → delivered', async () => {
    const hook = await receiver(() => ({ status: 503, body: 'down for maintenance' }));
    const { executionId, deliveryId } = await finishWithWebhook(hook.url);
    const run = dispatcher();
    await deliverUntilSettled(run);
    expect(hook.received).toHaveLength(3);

    const dlq = await call('GET', '/api/ui/v1/webhooks/dead-letters?limit=500');
    expect(dlq.body.dead_letters).toContainEqual(
      expect.objectContaining({
        delivery_id: deliveryId,
        status: 'dead',
        attempt_count: 3,
        last_status_code: 503,
      }),
    );

    hook.answerWith(() => ({ status: 204 }));
    const wakesBefore = wakes;
    const retried = await call('POST', `/api/ui/v1/executions/${executionId}/webhook/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({
      delivery_id: deliveryId,
      status: 'pending',
      attempt_count: 0,
      manual: true,
      dead_at: null,
      next_attempt_at: new Date(clock.now()).toISOString(),
    });
    expect(wakes).toBe(wakesBefore + 1);
    // Out of the dead-letter queue as soon as it is pending again.
    const after = await call('GET', '/api/ui/v1/webhooks/dead-letters?limit=500');
    expect(after.body.dead_letters.map((d: { delivery_id: string }) => d.delivery_id)).not.toContain(
      deliveryId,
    );

    await run.runOnce();
    expect(hook.received).toHaveLength(4);
    expect(hook.received[3]).toMatchObject({ signatureValid: true, fresh: true, replay: false, status: 204 });
    expect(hook.received[3]!.body!.delivery_id).toBe(deliveryId);

    const history = await call('GET', `/api/ui/v1/executions/${executionId}/webhook/deliveries`);
    const [delivery] = history.body.deliveries;
    expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 1, manual: true });
    expect(delivery.attempts.map((a: { attempt: number; manual: boolean }) => [a.attempt, a.manual])).toEqual(
      [
        [1, false],
        [2, false],
        [3, false],
        [1, true],
      ],
    );
  });

  it('re-delivers a delivered one too, and a receiver that remembers delivery ids sees a replay', async () => {
    const hook = await receiver();
    const { executionId } = await finishWithWebhook(hook.url);
    const run = dispatcher();
    await run.runOnce();
    expect((await call('POST', `/api/ui/v1/executions/${executionId}/webhook/retry`)).status).toBe(202);
    await run.runOnce();
    expect(hook.received.map((r) => r.replay)).toEqual([false, true]);
  });

  it('answers 409 conflict while the delivery is pending', async () => {
    const hook = await receiver();
    const { executionId, deliveryId } = await finishWithWebhook(hook.url);
    const answer = await call('POST', `/api/ui/v1/executions/${executionId}/webhook/retry`);
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ code: 'conflict' });
    expect(answer.body.detail).toContain(deliveryId);
    expect(hook.received).toHaveLength(0);
  });

  it('answers 404 for an unknown execution, one without a delivery, and a malformed id', async () => {
    const unknown = await call('POST', '/api/ui/v1/executions/exec_nobody/webhook/retry');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Execution "exec_nobody" does not exist.');
    const executionId = await insertExecution();
    const bare = await call('POST', `/api/ui/v1/executions/${executionId}/webhook/retry`);
    expect(bare.status).toBe(404);
    expect(bare.body.detail).toMatch(/has no webhook delivery/);
    const malformed = await call('POST', `/api/ui/v1/executions/${'x'.repeat(200)}/webhook/retry`);
    expect(malformed.status).toBe(404);
    expect(malformed.body.code).toBe('not_found');
  });
});

describe('GET /api/ui/v1/webhooks/dead-letters', () => {
  it('pages newest first with an opaque cursor', async () => {
    const hook = await receiver(() => ({ status: 500 }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { deliveryId } = await finishWithWebhook(hook.url);
      ids.push(deliveryId);
      // One at a time, so each dies at its own time: newest first is the reverse order.
      await deliverUntilSettled(dispatcher());
    }
    const seen: string[] = [];
    const times: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=1&cursor=${cursor}` : '?limit=1';
      const page = await call('GET', `/api/ui/v1/webhooks/dead-letters${query}`);
      expect(page.status).toBe(200);
      expect(page.body.dead_letters.length).toBeLessThanOrEqual(1);
      for (const dead of page.body.dead_letters) {
        seen.push(dead.delivery_id);
        times.push(dead.dead_at);
      }
      cursor = page.body.next_cursor;
    } while (cursor);
    // Earlier tests of this file left dead letters too (some died during this test's passes).
    expect(seen.filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('answers 400 invalid_request naming limit or cursor when either is wrong', async () => {
    for (const limit of ['0', '501', 'abc', '1.5', '-1', '']) {
      const answer = await call('GET', `/api/ui/v1/webhooks/dead-letters?limit=${limit}`);
      expect(answer.status, limit).toBe(400);
      expect(answer.body.errors, limit).toEqual([
        { field: 'limit', message: expect.stringMatching(/1 to 500/) },
      ]);
    }
    const forged = Buffer.from('2026-01-01T00:00:00.000Z|not-a-delivery').toString('base64url');
    // A time the database cannot store, in an otherwise well-formed cursor.
    const yearZero = Buffer.from('0000-06-01T00:00:00.000Z|whd_0000000000000000000000000a').toString(
      'base64url',
    );
    for (const cursor of ['!!!', 'abc', forged, yearZero, 'x'.repeat(300)]) {
      const answer = await call('GET', `/api/ui/v1/webhooks/dead-letters?cursor=${cursor}`);
      expect(answer.status, cursor).toBe(400);
      expect(answer.body.errors[0].field).toBe('cursor');
    }
    const twice = await call('GET', '/api/ui/v1/webhooks/dead-letters?limit=1&limit=2');
    expect(twice.status).toBe(400);
  });
});
