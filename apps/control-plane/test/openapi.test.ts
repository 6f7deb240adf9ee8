import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import { RUN_BUNDLE_LIMITS } from '@switchyard/shared';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createApp } from '../src/app.ts';
import { type Config, ConfigError, defaultConfig, loadConfig, STORED_CONFIG_NAME } from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { putStoredConfig } from '../src/modules/config-store/index.ts';
import { CONNECTOR_CAPABILITIES, CONNECTOR_PREFIXES } from '../src/modules/connector/index.ts';
import { EXECUTE_BODY_LIMIT, REPORT_LIMIT } from '../src/modules/executions/routes.ts';
import { attachUpgrades } from '../src/platform/http/upgrade.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { deadAgentUrl } from './helpers/agents.ts';
import { call, registration, uniqueNodeId } from './helpers/control-plane.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import {
  type ExecutionAgent,
  registerUnstartedAgent,
  startExecutionAgent,
  type UnstartedAgent,
} from './helpers/execution-agent.ts';
import { createOpenApiValidator, METHODS, type OpenApiValidator } from './helpers/openapi.ts';

/**
 * The control plane's OpenAPI document (GET /api/v1/openapi.json): valid OpenAPI 3.1, one
 * operation for each mounted route and no other, and real answers (the happy and error paths of
 * every operation, through the real app on a real database) that match its response schemas.
 */
const KEY = 'openapi-test-key';
const AUTH = { 'X-API-Key': KEY };
const CONNECTOR_TOKEN = 'openapi-connector-token';

let handle: TestDatabase;
const servers: Server[] = [];
/** Agents the execution cases start; closed before the servers. */
const agents: Array<ExecutionAgent | UnstartedAgent> = [];
let config: Config;
let base: string;
let published: Record<string, any>;
let validator: OpenApiValidator;
/** `METHOD template` → the statuses real answers were validated for. */
const seen = new Map<string, Set<string>>();

async function listen(app: ReturnType<typeof createApp>): Promise<string> {
  const server = createServer(app.callback());
  // Longer than any pause between two requests of this file (compiling the document's validator
  // blocks the loop for seconds): with Node's 5 s, an idle keep-alive connection could be closed
  // by the server just as fetch reused it, and the request failed with ECONNRESET.
  server.keepAliveTimeout = 60_000;
  attachUpgrades(server, app.callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  config = defaultConfig();
  config.api.auth = { apiKey: KEY, skipPaths: [] };
  // Webhooks of the execution cases go to 127.0.0.1 over plain http.
  config.executionQueue.webhookAllowHttp = true;
  config.executionQueue.webhookAllowPrivateNetworks = true;
  // The connector API is on, with every capability (its case also runs an app without them).
  config.connector.token = CONNECTOR_TOKEN;
  config.connector.capabilities = [...CONNECTOR_CAPABILITIES];
  base = await listen(createApp({ db: handle.db, config, log: silentLogger() }));
  const response = await fetch(`${base}/api/v1/openapi.json`);
  published = (await response.json()) as Record<string, any>;
  validator = createOpenApiValidator(published);
});

afterAll(async () => {
  for (const agent of agents) {
    if ('close' in agent) await agent.close();
    else agent.stopHeartbeats();
  }
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  await handle.close();
});

/**
 * Sends a request (with the API key unless `key: false`), checks the answer against the
 * document and records which status of which operation it exercised.
 */
async function exercise(
  method: string,
  path: string,
  body?: unknown,
  options: { key?: boolean; at?: string; headers?: Record<string, string> } = {},
) {
  const headers = { ...(options.key === false ? {} : AUTH), ...options.headers };
  const response = await call(options.at ?? base, method, path, body, headers);
  const recorded = {
    method,
    path: path.split('?')[0]!,
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: response.body,
  };
  validator.expectMatches(recorded);
  const found = validator.operationFor(method, recorded.path)!;
  const key = `${method.toUpperCase()} ${found.template}`;
  if (!seen.has(key)) seen.set(key, new Set());
  seen.get(key)!.add(String(response.status));
  return response;
}

/** A request with headers fetch will not send (Host), through node:http. */
function rawRequest(method: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; contentType: string | null; body: unknown }>((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'] ?? null,
          body: text ? JSON.parse(text) : undefined,
        }),
      );
    });
    request.on('error', reject);
    request.end(method === 'POST' ? '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' : undefined);
  });
}

/** A JSON body of `bytes` bytes: over a limit of bytes - 1. */
function bodyOfSize(bytes: number): string {
  const text = JSON.stringify({ pad: '' });
  return JSON.stringify({ pad: 'x'.repeat(bytes - text.length) });
}

/** A registered agent serving one reasoner `fn` that answers as `kind`; closed in afterAll. */
async function executionAgent(kind: 'answer' | 'accept' | 'hang' | 'crash' | 'error'): Promise<string> {
  const agent = await startExecutionAgent({
    controlPlaneUrl: base,
    nodeId: uniqueNodeId(`oas-${kind}`),
    reasoners: { fn: { kind } },
    heartbeatMs: 60_000,
    apiKey: KEY,
  });
  agents.push(agent);
  await agent.register();
  return `${agent.nodeId}.fn`;
}

/**
 * A registered agent whose reasoner `fn` has, stored in its row, an input_schema with a lookahead:
 * as a release that did not refuse such patterns at registration left it.
 */
async function targetWithStoredLookahead(): Promise<string> {
  const target = await executionAgent('answer');
  const nodeId = target.split('.')[0]!;
  const [row] = await handle.db('node_instances').where({ node_id: nodeId }).select('reasoners');
  const reasoners = typeof row.reasoners === 'string' ? JSON.parse(row.reasoners) : row.reasoners;
  reasoners[0].input_schema = {
    type: 'object',
    properties: { text: { type: 'string', pattern: '^(?!\\s*$)' } },
  };
  await handle
    .db('node_instances')
    .where({ node_id: nodeId })
    .update({ reasoners: JSON.stringify(reasoners) });
  return target;
}

/** A queued execution (the async dispatcher does not run in this app): its id. */
async function queuedExecution(target: string, body: Record<string, unknown> = {}): Promise<string> {
  const answer = await exercise('POST', `/api/v1/execute/async/${target}`, { input: { n: 1 }, ...body });
  expect(answer.status).toBe(202);
  return answer.body.execution_id;
}

/** Every operation of the document as [method, template, operation]. */
function operations(document: Record<string, any>): Array<[string, string, Record<string, any>]> {
  const list: Array<[string, string, Record<string, any>]> = [];
  for (const [template, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const method of METHODS) if (item[method]) list.push([method.toUpperCase(), template, item[method]]);
  }
  return list;
}

/** A JSON Pointer into the document. */
function pointer(...parts: string[]): string {
  return parts.map((part) => `/${part.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

describe('GET /api/v1/openapi.json', () => {
  it('serves the document as JSON without the API key', async () => {
    const response = await fetch(`${base}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(published).toMatchObject({
      openapi: '3.1.0',
      info: { title: 'Switchyard control plane API', version: expect.any(String) },
    });
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(published));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('declares one operation for every route the app mounts, and no other', async () => {
    // The 404 answer lists what the routers mount (platform/http/fallback.ts endpointMap).
    const miss = await call(base, 'GET', '/api/v1/no-such-endpoint', undefined, AUTH);
    expect(miss.status).toBe(404);
    const shape = (path: string) => path.replace(/\{[^}]+\}/g, ':').replace(/:[A-Za-z_]\w*/g, ':');
    const mounted = Object.entries<string[]>(miss.body.available_endpoints)
      .flatMap(([path, methods]) => methods.map((method) => `${method} ${shape(path)}`))
      .sort();
    const documented = operations(published)
      .map(([method, template]) => `${method} ${shape(template)}`)
      .sort();
    expect(documented).toEqual(mounted);
  });

  it('gives every operation a unique operationId, a summary, tags and a success response', () => {
    const ids = operations(published).map(([, , operation]) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [method, template, operation] of operations(published)) {
      const where = `${method} ${template}`;
      expect(operation.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, where).toEqual(expect.any(String));
      expect(operation.tags?.length, where).toBeGreaterThan(0);
      // A WebSocket operation succeeds with 101 Switching Protocols, never a 2xx: its 101 counts, and
      // only when it documents the `Upgrade: websocket` it switches to. Not a weakening: every
      // other operation still needs a 2xx, and a WebSocket one still needs its success answer.
      const switches = operation.responses['101']?.headers?.Upgrade?.schema?.const === 'websocket';
      expect(
        Object.keys(operation.responses).some(
          (status) => status.startsWith('2') || (switches && status === '101'),
        ),
        where,
      ).toBe(true);
      expect(operation.responses.default?.content?.['application/problem+json'], where).toBeDefined();
      const open = Array.isArray(operation.security) && operation.security.length === 0;
      expect(Boolean(operation.responses['401']), `${where} 401 unless open`).toBe(!open);
    }
  });

  it('gives examples that match their own schemas, for every request and response that has a body', () => {
    let examples = 0;
    for (const [method, template, operation] of operations(published)) {
      const at = ['paths', template, method.toLowerCase()];
      const bodies: Array<[string[], Record<string, any>]> = [];
      for (const [type, media] of Object.entries<Record<string, any>>(operation.requestBody?.content ?? {})) {
        bodies.push([[...at, 'requestBody', 'content', type], media]);
      }
      for (const [status, response] of Object.entries<Record<string, any>>(operation.responses)) {
        for (const [type, media] of Object.entries<Record<string, any>>(response.content ?? {})) {
          bodies.push([[...at, 'responses', status, 'content', type], media]);
        }
      }
      for (const [where, media] of bodies) {
        const values = [
          ...(media.example !== undefined ? [media.example] : []),
          ...Object.values<Record<string, any>>(media.examples ?? {}).map((example) => example.value),
        ];
        // Every success body has an example; problem bodies have theirs where a status is declared.
        const generic = where.includes('default');
        if (!generic) expect(values.length, where.join(' ')).toBeGreaterThan(0);
        for (const value of values) {
          examples++;
          expect(validator.check(pointer(...where, 'schema'), value), where.join(' ')).toEqual([]);
        }
      }
    }
    expect(examples).toBeGreaterThan(50);
  });

  it('has schemas that tell a wrong answer from a right one (the oracle is not vacuous)', () => {
    const health = pointer(
      'paths',
      '/api/v1/health',
      'get',
      'responses',
      '200',
      'content',
      'application/json',
      'schema',
    );
    expect(validator.check(health, { status: 'fine', checks: {} })).not.toEqual([]);
    expect(validator.check('/components/schemas/Problem', { type: 'x', status: 400 })).not.toEqual([]);
    expect(validator.check('/components/schemas/NodeInstance', { id: 'a', node_id: 'a' })).not.toEqual([]);
    expect(
      validator.problemsOf({
        method: 'GET',
        path: '/api/v1/health',
        status: 201,
        contentType: 'application/json',
        body: {},
      }),
    ).not.toEqual([]);
  });
});

describe('real answers match the document', () => {
  it('health, metrics and this document', async () => {
    await exercise('GET', '/api/v1/health', undefined, { key: false });
    await exercise('GET', '/metrics', undefined, { key: false });
    await exercise('GET', '/api/v1/openapi.json', undefined, { key: false });
    // A report with a failed check: the database of this app is gone.
    const broken = await openMigratedTestDatabase();
    const at = await listen(createApp({ db: broken.db, log: silentLogger() }));
    await broken.close();
    expect((await exercise('GET', '/api/v1/health', undefined, { at })).status).toBe(503);
  });

  it('the dashboard overview, with and without the key', async () => {
    expect((await exercise('GET', '/api/ui/v1/overview')).status).toBe(200);
    expect((await exercise('GET', '/api/ui/v1/overview', undefined, { key: false })).status).toBe(401);
  });

  it('discovery: json, compact and xml answers, and a bad parameter', async () => {
    const id = uniqueNodeId('oas-discovery');
    await exercise('POST', '/api/v1/nodes/register', registration(id, 'http://127.0.0.1:9'));
    const path = `/api/v1/discovery/capabilities?agent=${id}&include_input_schema=true&include_descriptions=1`;
    const listing = await exercise('GET', path);
    expect(listing.body.capabilities[0].reasoners[0].input_schema).toBeDefined();
    await exercise('GET', `/api/v1/discovery/capabilities?format=compact&agent=${id}`);
    const xml = await exercise('GET', `/api/v1/discovery/capabilities?format=xml&agent=${id}`);
    expect(xml.headers.get('content-type')).toMatch(/^application\/xml/);
    await exercise('GET', '/api/v1/discovery/capabilities?limit=0');
    await exercise('GET', '/api/v1/discovery/capabilities', undefined, { key: false });
  });

  it('registration (both paths): 201, 200 again, 400 naming the field, 413, 401', async () => {
    for (const path of ['/api/v1/nodes/register', '/api/v1/nodes']) {
      const id = uniqueNodeId('oas-register');
      expect((await exercise('POST', path, registration(id, 'http://127.0.0.1:9'))).status).toBe(201);
      expect((await exercise('POST', path, registration(id, 'http://127.0.0.1:9'))).status).toBe(200);
      const invalid = await exercise(
        'POST',
        path,
        registration(id, 'http://127.0.0.1:9', { reasoners: [{ id: 'a b' }] }),
      );
      expect(invalid.body.errors).toContainEqual({ field: 'reasoners[0].id', message: expect.any(String) });
      expect((await exercise('POST', path, '{"id":')).status).toBe(400);
      expect((await exercise('POST', path, bodyOfSize(1024 * 1024 + 1))).status).toBe(413);
      expect((await exercise('POST', path, {}, { key: false })).status).toBe(401);
    }
  });

  it('one node: read, heartbeat, status, refresh, lifecycle report; 400, 404, 413 and 401 for each', async () => {
    const id = uniqueNodeId('oas-node');
    await exercise('POST', '/api/v1/nodes/register', registration(id, 'http://127.0.0.1:9'));
    const missing = uniqueNodeId('oas-missing');
    const cases: Array<{ method: string; path: string; ok: unknown; invalid?: unknown; limit?: number }> = [
      { method: 'GET', path: `/api/v1/nodes/${id}`, ok: undefined },
      { method: 'GET', path: `/api/v1/nodes/${id}/status`, ok: undefined },
      {
        method: 'POST',
        path: `/api/v1/nodes/${id}/heartbeat`,
        ok: { status: 'ready', version: '1.0.0' },
        invalid: { status: 'bogus' },
        limit: 64 * 1024,
      },
      {
        method: 'PATCH',
        path: `/api/v1/nodes/${id}/status`,
        ok: { state: 'ready', health: { queue: 0 } },
        invalid: { status: 'ready', state: 'offline' },
        limit: 256 * 1024,
      },
      { method: 'POST', path: `/api/v1/nodes/${id}/status/refresh`, ok: {}, invalid: [1], limit: 16 * 1024 },
      {
        method: 'POST',
        path: `/api/v1/nodes/${id}/lifecycle/status`,
        ok: { status: 'ready' },
        invalid: {},
        limit: 64 * 1024,
      },
    ];
    for (const { method, path, ok, invalid, limit } of cases) {
      expect((await exercise(method, path, ok)).status, `${method} ${path}`).toBe(200);
      expect((await exercise(method, path.replace(id, missing), ok)).status).toBe(404);
      expect((await exercise(method, path, ok, { key: false })).status).toBe(401);
      if (invalid !== undefined) expect((await exercise(method, path, invalid)).status).toBe(400);
      if (limit !== undefined) expect((await exercise(method, path, bodyOfSize(limit + 1))).status).toBe(413);
    }
  });

  it('lifecycle actions: start, stop and shutdown; 400, 404, 413 and 401 for each', async () => {
    for (const action of ['stop', 'start', 'shutdown']) {
      const id = uniqueNodeId(`oas-${action}`);
      await exercise('POST', '/api/v1/nodes/register', registration(id, 'http://127.0.0.1:9'));
      const path = `/api/v1/nodes/${id}/${action}`;
      const answer = await exercise('POST', path, { reason: 'openapi test', notify: false });
      expect(answer.status).toBe(200);
      expect(answer.body.action).toBe(action);
      expect((await exercise('POST', path.replace(id, uniqueNodeId('oas-missing')), {})).status).toBe(404);
      expect((await exercise('POST', path, { drain_timeout_ms: -1 })).status).toBe(400);
      expect((await exercise('POST', path, bodyOfSize(16 * 1024 + 1))).status).toBe(413);
      expect((await exercise('POST', path, {}, { key: false })).status).toBe(401);
    }
  });

  it('fleet: bulk status, fleet refresh and the UI list; 400, 413 and 401', async () => {
    const id = uniqueNodeId('oas-fleet');
    await exercise('POST', '/api/v1/nodes/register', registration(id, 'http://127.0.0.1:9'));
    const bulk = await exercise('POST', '/api/v1/nodes/status/bulk', { node_ids: [id, 'oas-nobody'] });
    expect(bulk.body['oas-nobody'].error).toBe('not_found');
    expect((await exercise('POST', '/api/v1/nodes/status/bulk', { node_ids: [] })).status).toBe(400);
    expect((await exercise('POST', '/api/v1/nodes/status/bulk', bodyOfSize(512 * 1024 + 1))).status).toBe(
      413,
    );
    expect((await exercise('POST', '/api/v1/nodes/status/bulk', {}, { key: false })).status).toBe(401);
    expect((await exercise('POST', '/api/v1/nodes/status/refresh', undefined)).status).toBe(200);
    expect((await exercise('POST', '/api/v1/nodes/status/refresh', [1])).status).toBe(400);
    expect((await exercise('POST', '/api/v1/nodes/status/refresh', bodyOfSize(16 * 1024 + 1))).status).toBe(
      413,
    );
    expect((await exercise('POST', '/api/v1/nodes/status/refresh', {}, { key: false })).status).toBe(401);
    expect((await exercise('GET', `/api/ui/v1/nodes?node_id=${id}`)).body.total).toBe(1);
    expect((await exercise('GET', '/api/ui/v1/nodes?status=bogus')).status).toBe(400);
    expect((await exercise('GET', '/api/ui/v1/nodes', undefined, { key: false })).status).toBe(401);
  });

  it('node events: the stream opens as text/event-stream; a bad query is 400; no key is 401', async () => {
    const abort = new AbortController();
    const response = await fetch(`${base}/api/ui/v1/nodes/events`, { headers: AUTH, signal: abort.signal });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const recorded = {
      method: 'GET',
      path: '/api/ui/v1/nodes/events',
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: first,
    };
    validator.expectMatches(recorded);
    seen.set('GET /api/ui/v1/nodes/events', new Set(['200']));
    expect(first).toMatch(/^retry: \d+\n/);
    expect((await exercise('GET', '/api/ui/v1/nodes/events?node_id=')).status).toBe(400);
    expect((await exercise('GET', '/api/ui/v1/nodes/events', undefined, { key: false })).status).toBe(401);
  });

  it('execute (sync): 200 succeeded, 502 failed, 400, 404, 409, 413, 401, 502, 503 and 504', async () => {
    const answering = await executionAgent('answer');
    const ok = await exercise('POST', `/api/v1/execute/${answering}`, { input: { text: 'hi' } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('succeeded');
    const failing = await executionAgent('error');
    const failed = await exercise('POST', `/api/v1/execute/${failing}`, { input: {} });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ code: 'execution_failed', execution_status: 'failed' });
    const path = `/api/v1/execute/${answering}`;
    for (const invalid of [
      '{"input":',
      { input: 'text' },
      { input: {}, webhook: { url: 'https://x.test' } },
    ]) {
      expect((await exercise('POST', path, invalid)).status).toBe(400);
    }
    expect((await exercise('POST', '/api/v1/execute/no-function', { input: {} })).status).toBe(400);
    const header = { 'X-Workflow-ID': 'tab\there' };
    expect((await exercise('POST', path, { input: {} }, { headers: header })).status).toBe(400);
    const nobody = uniqueNodeId('oas-nobody');
    expect((await exercise('POST', `/api/v1/execute/${nobody}.fn`, { input: {} })).status).toBe(404);
    expect((await exercise('POST', `${path}x`, { input: {} })).status).toBe(404);
    const stale = await targetWithStoredLookahead();
    expect((await exercise('POST', `/api/v1/execute/${stale}`, { input: {} })).status).toBe(409);
    expect((await exercise('POST', path, bodyOfSize(EXECUTE_BODY_LIMIT + 1))).status).toBe(413);
    expect((await exercise('POST', path, { input: {} }, { key: false })).status).toBe(401);
    // 502: an agent that drops the connection, and one whose base_url nobody listens on.
    const crashing = await executionAgent('crash');
    const lost = await exercise('POST', `/api/v1/execute/${crashing}`, { input: {} });
    expect(lost.status).toBe(502);
    expect(lost.headers.get('x-execution-id')).toBe(lost.body.execution_id);
    const unstarted = await registerUnstartedAgent({
      controlPlaneUrl: base,
      nodeId: uniqueNodeId('oas-unstarted'),
      reasoners: { fn: { kind: 'answer' } },
      heartbeatMs: 60_000,
      apiKey: KEY,
    });
    agents.push(unstarted);
    const unreachable = await exercise('POST', `/api/v1/execute/${unstarted.nodeId}.fn`, { input: {} });
    expect(unreachable.status).toBe(502);
    // 503: registered, but never reported ready.
    const starting = uniqueNodeId('oas-starting');
    await exercise('POST', '/api/v1/nodes/register', registration(starting, 'http://127.0.0.1:9'));
    const unavailable = await exercise('POST', `/api/v1/execute/${starting}.summarize`, {
      input: { text: 'a' },
    });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('5');
    // 504: an agent that never answers, on an app with a short synchronous timeout.
    const hanging = await executionAgent('hang');
    const at = await listen(
      createApp({
        db: handle.db,
        config: { ...config, executionQueue: { ...config.executionQueue, syncTimeoutMs: 300 } },
        log: silentLogger(),
      }),
    );
    const timedOut = await exercise('POST', `/api/v1/execute/${hanging}`, { input: {} }, { at });
    expect(timedOut.status).toBe(504);
    expect(timedOut.headers.get('x-execution-id')).toBe(timedOut.body.execution_id);
  });

  it('execute (async): 202 with a webhook registered or refused, 400, 404, 409, 413, 401, 429 and 503', async () => {
    const target = await executionAgent('answer');
    const path = `/api/v1/execute/async/${target}`;
    const hook = `${await deadAgentUrl()}/hook`;
    const registered = await exercise('POST', path, { input: {}, webhook: { url: hook, secret: 's' } });
    expect(registered.status).toBe(202);
    expect(registered.body).toMatchObject({ status: 'queued', webhook_registered: true });
    const refused = await exercise('POST', path, { input: {}, webhook: { url: 'ftp://x.test/hook' } });
    expect(refused.body).toMatchObject({ webhook_registered: false, webhook_error: expect.any(String) });
    for (const invalid of ['{"input":', { input: 'text' }, { input: { text: 'nul\u0000' } }]) {
      expect((await exercise('POST', path, invalid)).status).toBe(400);
    }
    expect((await exercise('POST', '/api/v1/execute/async/no-function', { input: {} })).status).toBe(400);
    expect((await exercise('POST', `${path}x`, { input: {} })).status).toBe(404);
    const stale = await targetWithStoredLookahead();
    expect((await exercise('POST', `/api/v1/execute/async/${stale}`, { input: {} })).status).toBe(409);
    expect((await exercise('POST', path, bodyOfSize(EXECUTE_BODY_LIMIT + 1))).status).toBe(413);
    expect((await exercise('POST', path, { input: {} }, { key: false })).status).toBe(401);
    const starting = uniqueNodeId('oas-starting');
    await exercise('POST', '/api/v1/nodes/register', registration(starting, 'http://127.0.0.1:9'));
    const unavailable = await exercise('POST', `/api/v1/execute/async/${starting}.summarize`, {
      input: { text: 'a' },
    });
    expect(unavailable.status).toBe(503);
    // 429: the queue of an app with queue_size 1 already holds the executions queued above.
    const at = await listen(
      createApp({
        db: handle.db,
        config: { ...config, executionQueue: { ...config.executionQueue, queueSize: 1 } },
        log: silentLogger(),
      }),
    );
    const full = await exercise('POST', path, { input: {} }, { at });
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('1');
  });

  it('executions: list, batch status and one record; 400, 404, 413 and 401', async () => {
    const target = await executionAgent('answer');
    const first = await queuedExecution(target);
    const second = await queuedExecution(target);
    const filter = `target=${target}&limit=1`;
    const ids = (answer: { body: { executions: Array<{ execution_id: string }> } }) =>
      answer.body.executions.map((e) => e.execution_id);
    const page = await exercise('GET', `/api/v1/executions?${filter}`);
    const cursor = encodeURIComponent(page.body.next_cursor);
    const next = await exercise('GET', `/api/v1/executions?${filter}&cursor=${cursor}`);
    // Newest first; two created in the same millisecond may come in either order.
    expect([...ids(page), ...ids(next)].sort()).toEqual([first, second].sort());
    expect(next.body.next_cursor).toBeNull();
    expect((await exercise('GET', '/api/v1/executions?status=bogus')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/executions?cursor=bogus')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/executions', undefined, { key: false })).status).toBe(401);

    const batch = await exercise('POST', '/api/v1/executions/batch-status', {
      execution_ids: [first, 'exec_oas_missing'],
    });
    expect(Object.keys(batch.body)).toEqual([first]);
    expect((await exercise('POST', '/api/v1/executions/batch-status', { execution_ids: [] })).status).toBe(
      400,
    );
    expect((await exercise('POST', '/api/v1/executions/batch-status', '{"execution_ids":')).status).toBe(400);
    expect(
      (await exercise('POST', '/api/v1/executions/batch-status', bodyOfSize(256 * 1024 + 1))).status,
    ).toBe(413);
    expect((await exercise('POST', '/api/v1/executions/batch-status', {}, { key: false })).status).toBe(401);

    expect((await exercise('GET', `/api/v1/executions/${first}`)).body.status).toBe('queued');
    expect((await exercise('GET', '/api/v1/executions/exec_oas_missing')).status).toBe(404);
    expect((await exercise('GET', `/api/v1/executions/${'x'.repeat(201)}`)).status).toBe(404);
    expect((await exercise('GET', `/api/ui/v1/executions/${first}/input`)).status).toBe(200);
    expect((await exercise('GET', `/api/ui/v1/executions/exec_nope/input`)).status).toBe(404);
    expect(
      (await exercise('GET', `/api/ui/v1/executions/${first}/input`, undefined, { key: false })).status,
    ).toBe(401);
    expect((await exercise('GET', `/api/v1/executions/${first}`, undefined, { key: false })).status).toBe(
      401,
    );
  });

  it('one execution: status reports, logs and cancel; 400, 404, 409, 413 and 401', async () => {
    const target = await executionAgent('answer');
    const id = await queuedExecution(target);
    const missing = 'exec_oas_missing';
    const report = `/api/v1/executions/${id}/status`;
    expect((await exercise('POST', report, { status: 'running', progress: 40 })).body.progress).toBe(40);
    expect((await exercise('POST', report, { status: 'bogus' })).status).toBe(400);
    expect((await exercise('POST', report, '{"status":')).status).toBe(400);
    expect((await exercise('POST', report, bodyOfSize(REPORT_LIMIT + 1))).status).toBe(413);
    expect((await exercise('POST', report.replace(id, missing), { status: 'running' })).status).toBe(404);
    expect((await exercise('POST', report, { status: 'running' }, { key: false })).status).toBe(401);

    const logs = `/api/v1/executions/${id}/logs`;
    const posted = await exercise('POST', logs, [{ level: 'info', message: 'one' }, { message: 'two' }]);
    expect(posted).toMatchObject({ status: 202, body: { accepted: 2 } });
    expect((await exercise('POST', logs, { logs: [{ message: 'three' }] })).status).toBe(202);
    expect((await exercise('POST', logs, [{ message: 'ok' }, 1])).status).toBe(400);
    expect((await exercise('POST', logs, bodyOfSize(1024 * 1024 + 1))).status).toBe(413);
    const tooMany = Array.from({ length: 1001 }, () => ({ message: 'x' }));
    expect((await exercise('POST', logs, tooMany)).status).toBe(413);
    expect((await exercise('POST', logs.replace(id, missing), { message: 'x' })).status).toBe(404);
    expect((await exercise('POST', logs, { message: 'x' }, { key: false })).status).toBe(401);
    const read = await exercise('GET', `${logs}?limit=2`);
    expect(read.body.entries).toHaveLength(2);
    const rest = await exercise('GET', `${logs}?after=${read.body.next_after}`);
    expect(rest.body).toMatchObject({ entries: [{ entry: { message: 'three' } }], next_after: null });
    expect((await exercise('GET', `${logs}?after=-1`)).status).toBe(400);
    expect((await exercise('GET', logs.replace(id, missing))).status).toBe(404);
    expect((await exercise('GET', logs, undefined, { key: false })).status).toBe(401);

    const cancel = `/api/v1/executions/${id}/cancel`;
    expect((await exercise('POST', cancel, undefined, { key: false })).status).toBe(401);
    const cancelled = await exercise('POST', cancel);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', agent_notified: false });
    expect((await exercise('POST', cancel)).status).toBe(409);
    expect((await exercise('POST', cancel.replace(id, missing))).status).toBe(404);
    // A report on an ended execution changes nothing and answers its record.
    expect((await exercise('POST', report, { status: 'succeeded', result: 1 })).body.status).toBe(
      'cancelled',
    );
  });

  it('workflow DAG: 200 with a parent and its child; 400, 404 and 401', async () => {
    const target = await executionAgent('answer');
    const workflow = `wf-${uniqueNodeId('oas')}`;
    const execute = (headers: Record<string, string>) =>
      exercise('POST', `/api/v1/execute/${target}`, { input: {} }, { headers });
    const root = await execute({ 'X-Workflow-ID': workflow });
    const child = await execute({ 'X-Parent-Execution-ID': root.body.execution_id });
    const dag = await exercise('GET', `/api/v1/workflows/${workflow}/dag`);
    expect(dag.body).toMatchObject({
      total_nodes: 2,
      depth: 2,
      edges: [{ from: root.body.execution_id, to: child.body.execution_id }],
    });
    expect((await exercise('GET', `/api/v1/workflows/${'w'.repeat(257)}/dag`)).status).toBe(400);
    expect((await exercise('GET', `/api/v1/workflows/wf-oas-nobody/dag`)).status).toBe(404);
    expect(
      (await exercise('GET', `/api/v1/workflows/${workflow}/dag`, undefined, { key: false })).status,
    ).toBe(401);
  });

  it('sharing a workflow run: bundle 200 and share 201; 400, 404, 409, 413, 401, 502 and 503', async () => {
    const target = await executionAgent('answer');
    const workflow = `wf-${uniqueNodeId('oas-share')}`;
    const root = await exercise(
      'POST',
      `/api/v1/execute/${target}`,
      { input: { a: 1 } },
      {
        headers: { 'X-Workflow-ID': workflow },
      },
    );
    await exercise(
      'POST',
      `/api/v1/execute/${target}`,
      { input: { b: 2 } },
      {
        headers: { 'X-Parent-Execution-ID': root.body.execution_id },
      },
    );
    const bundle = `/api/ui/v1/workflows/${workflow}/bundle`;
    const shareOf = (id: string) => `/api/ui/v1/workflows/${id}/share`;
    const got = await exercise('GET', `${bundle}?redact=false&title=Report`);
    expect(got.body).toMatchObject({ version: 1, workflow_id: workflow, title: 'Report' });
    expect(got.body.nodes).toHaveLength(2);
    expect((await exercise('GET', `${bundle}?redact=maybe`)).status).toBe(400);
    expect((await exercise('GET', '/api/ui/v1/workflows/wf-oas-nobody/bundle')).status).toBe(404);
    expect((await exercise('GET', bundle, undefined, { key: false })).status).toBe(401);

    // More executions than a bundle holds: copies of the root's row under another workflow.
    const huge = `${workflow}-huge`;
    const [row] = await handle.db('executions').where({ execution_id: root.body.execution_id });
    await handle.db.batchInsert(
      'executions',
      Array.from({ length: RUN_BUNDLE_LIMITS.nodes + 1 }, (_, i) => ({
        ...row,
        execution_id: `exec_oas_huge_${i}`,
        workflow_id: huge,
        input: JSON.stringify(row.input),
        result: JSON.stringify(row.result),
      })),
      500,
    );
    expect((await exercise('GET', `/api/ui/v1/workflows/${huge}/bundle`)).status).toBe(409);

    // The docs site: a loopback server answering as the docs site does (the real one is driven by
    // tests/control-plane/share-run.test.ts), then one that refuses.
    let refuse = false;
    const docs = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (refuse) {
          res.writeHead(429, { 'Content-Type': 'application/problem+json' });
          res.end(
            JSON.stringify({ code: 'rate_limited', detail: 'This address has used its write budget.' }),
          );
          return;
        }
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ id: 'run_oas', url: 'http://docs.test/s/run_oas' }));
      });
    });
    await new Promise<void>((done) => docs.listen(0, '127.0.0.1', done));
    servers.push(docs);
    expect((await exercise('POST', shareOf(workflow), {})).status).toBe(503);
    config.shares.docsUrl = `http://127.0.0.1:${(docs.address() as { port: number }).port}`;
    const shared = await exercise('POST', shareOf(workflow), { title: 'Report', redact: true });
    expect(shared.status).toBe(201);
    expect(shared.body).toEqual({ id: 'run_oas', url: 'http://docs.test/s/run_oas' });
    expect((await exercise('POST', shareOf(workflow), { redact: 'no' })).status).toBe(400);
    expect((await exercise('POST', shareOf(workflow), { title: 'x'.repeat(17 * 1024) })).status).toBe(413);
    expect((await exercise('POST', shareOf('wf-oas-nobody'), {})).status).toBe(404);
    expect((await exercise('POST', shareOf(huge), {})).status).toBe(409);
    expect((await exercise('POST', shareOf(workflow), {}, { key: false })).status).toBe(401);
    refuse = true;
    const refused = await exercise('POST', shareOf(workflow), {});
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toContain('write budget');
    config.shares.docsUrl = undefined;
  });

  it('local calls and notes: 201, 200, 400, 404, 409, 413 and 401', async () => {
    const target = await executionAgent('answer');
    const nodeId = target.split('.')[0] as string;
    const parent = await exercise('POST', `/api/v1/execute/${target}`, { input: {} });
    const event = {
      execution_id: `local-${uniqueNodeId('oas')}`,
      run_id: parent.body.run_id,
      workflow_id: parent.body.workflow_id,
      reasoner_id: 'fn',
      agent_node_id: nodeId,
      status: 'running',
      parent_execution_id: parent.body.execution_id,
      input_data: { a: 1 },
    };
    const events = '/api/v1/workflow/executions/events';
    expect((await exercise('POST', events, event)).status).toBe(201);
    expect((await exercise('POST', events, { ...event, status: 'succeeded', result: { b: 2 } })).status).toBe(
      200,
    );
    expect((await exercise('POST', events, { ...event, status: 'paused' })).status).toBe(400);
    expect(
      (await exercise('POST', events, { ...event, execution_id: 'local-oas-2', agent_node_id: 'oas-nobody' }))
        .status,
    ).toBe(404);
    const routed = { ...event, execution_id: parent.body.execution_id };
    expect((await exercise('POST', events, routed)).status).toBe(409);
    expect((await exercise('POST', events, bodyOfSize(REPORT_LIMIT + 1))).status).toBe(413);
    expect((await exercise('POST', events, event, { key: false })).status).toBe(401);

    const note = '/api/ui/v1/executions/note';
    const on = { 'X-Execution-ID': parent.body.execution_id };
    expect((await exercise('POST', note, { message: 'hello' }, { headers: on })).status).toBe(201);
    expect((await exercise('POST', note, { message: '' }, { headers: on })).status).toBe(400);
    expect(
      (await exercise('POST', note, { message: 'x' }, { headers: { 'X-Execution-ID': 'exec_oas_missing' } }))
        .status,
    ).toBe(404);
    expect((await exercise('POST', note, bodyOfSize(64 * 1024 + 1), { headers: on })).status).toBe(413);
    expect((await exercise('POST', note, { message: 'x' }, { headers: on, key: false })).status).toBe(401);
  });

  it('execution events: the stream opens as text/event-stream; a bad query is 400; no key is 401', async () => {
    const abort = new AbortController();
    const response = await fetch(`${base}/api/ui/v1/executions/events`, {
      headers: AUTH,
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    validator.expectMatches({
      method: 'GET',
      path: '/api/ui/v1/executions/events',
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: first,
    });
    seen.set('GET /api/ui/v1/executions/events', new Set(['200']));
    expect(first).toMatch(/^retry: \d+\n/);
    expect((await exercise('GET', '/api/ui/v1/executions/events?last_event_id=abc')).status).toBe(400);
    expect((await exercise('GET', '/api/ui/v1/executions/events?target=')).status).toBe(400);
    expect((await exercise('GET', '/api/ui/v1/executions/events', undefined, { key: false })).status).toBe(
      401,
    );
  });

  it('webhooks: deliveries, retry (409 while pending, 202 once dead) and dead letters; 400, 404 and 401', async () => {
    const target = await executionAgent('answer');
    const hook = `${await deadAgentUrl()}/hook`;
    const id = await queuedExecution(target, { webhook: { url: hook, headers: { 'X-Team': 'qa' } } });
    const retry = `/api/ui/v1/executions/${id}/webhook/retry`;
    const deliveries = `/api/ui/v1/executions/${id}/webhook/deliveries`;
    expect((await exercise('GET', deliveries)).body.deliveries).toEqual([]);
    // Not finished yet: no delivery to retry.
    expect((await exercise('POST', retry)).status).toBe(404);
    // The agent's outcome ends it; its delivery waits for the webhook dispatcher (not running here).
    await exercise('POST', `/api/v1/executions/${id}/status`, { status: 'succeeded', result: { ok: true } });
    const pending = await exercise('GET', deliveries);
    expect(pending.body.deliveries).toMatchObject([{ status: 'pending', header_names: ['X-Team'] }]);
    expect((await exercise('POST', retry)).status).toBe(409);
    // Dead-lettered, as after every attempt failed.
    const now = new Date();
    await handle
      .db('webhook_deliveries')
      .where({ execution_id: id })
      .update({ status: 'dead', dead_at: now, next_attempt_at: null, updated_at: now });
    const letters = await exercise('GET', '/api/ui/v1/webhooks/dead-letters?limit=500');
    expect(letters.body.dead_letters).toContainEqual(
      expect.objectContaining({ execution_id: id, status: 'dead', dead_at: now.toISOString() }),
    );
    const retried = await exercise('POST', retry);
    expect(retried).toMatchObject({ status: 202, body: { status: 'pending', manual: true, dead_at: null } });
    expect((await exercise('POST', retry.replace(id, 'exec_oas_missing'))).status).toBe(404);
    expect((await exercise('POST', retry, undefined, { key: false })).status).toBe(401);
    expect((await exercise('GET', deliveries.replace(id, 'exec_oas_missing'))).status).toBe(404);
    expect((await exercise('GET', deliveries, undefined, { key: false })).status).toBe(401);
    expect((await exercise('GET', '/api/ui/v1/webhooks/dead-letters?limit=0')).status).toBe(400);
    expect((await exercise('GET', '/api/ui/v1/webhooks/dead-letters?cursor=bogus')).status).toBe(400);
    expect(
      (await exercise('GET', '/api/ui/v1/webhooks/dead-letters', undefined, { key: false })).status,
    ).toBe(401);
  });

  it('memory: set, get, delete and list; 400, 404, 409, 413 (set, get and delete) and 401', async () => {
    const headers = { 'X-Workflow-ID': 'wf_oas' };
    const set = await exercise(
      'POST',
      '/api/v1/memory/set',
      { key: 'draft', data: { words: 412 } },
      { headers },
    );
    expect(set.body).toMatchObject({ key: 'draft', scope: 'workflow', scope_id: 'wf_oas' });
    expect((await exercise('POST', '/api/v1/memory/set', { data: 1 })).status).toBe(400);
    const big = { key: 'big', data: 'x'.repeat(config.memory.maxValueBytes) };
    expect((await exercise('POST', '/api/v1/memory/set', big)).status).toBe(413);
    expect((await exercise('POST', '/api/v1/memory/set', big, { key: false })).status).toBe(401);
    // A deployment whose scopes hold one entry: the second key of a scope is over its quota.
    const smallConfig = defaultConfig();
    smallConfig.api.auth = config.api.auth;
    smallConfig.memory.scopeMaxEntries = 1;
    const small = await listen(createApp({ db: handle.db, config: smallConfig, log: silentLogger() }));
    const full = { headers: { 'X-Workflow-ID': 'wf_oas_full' }, at: small };
    expect((await exercise('POST', '/api/v1/memory/set', { key: 'one', data: 1 }, full)).status).toBe(200);
    expect((await exercise('POST', '/api/v1/memory/set', { key: 'two', data: 2 }, full)).status).toBe(409);
    expect((await exercise('POST', '/api/v1/memory/get', { key: 'draft' }, { headers })).body.data).toEqual({
      words: 412,
    });
    expect((await exercise('POST', '/api/v1/memory/get', { key: 'absent' }, { headers })).status).toBe(404);
    expect((await exercise('POST', '/api/v1/memory/get', { key: '' })).status).toBe(400);
    expect((await exercise('POST', '/api/v1/memory/get', { key: 'draft' }, { key: false })).status).toBe(401);
    expect((await exercise('POST', '/api/v1/memory/get', bodyOfSize(1024 * 1024 + 1))).status).toBe(413);
    const list = await exercise('GET', '/api/v1/memory/list?limit=10', undefined, { headers });
    expect(list.body).toMatchObject([{ key: 'draft' }]);
    expect((await exercise('GET', '/api/v1/memory/list?scope=session')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/memory/list', undefined, { key: false })).status).toBe(401);
    const deleted = await exercise('POST', '/api/v1/memory/delete', { key: 'draft' }, { headers });
    expect(deleted.body.deleted).toBe(true);
    expect((await exercise('POST', '/api/v1/memory/delete', { key: 'draft', scope: 'actor' })).status).toBe(
      400,
    );
    expect((await exercise('POST', '/api/v1/memory/delete', { key: 'draft' }, { key: false })).status).toBe(
      401,
    );
    expect((await exercise('POST', '/api/v1/memory/delete', bodyOfSize(1024 * 1024 + 1))).status).toBe(413);
  });

  it('memory vectors: store (both paths), read, delete (both), search; 400, 404, 409, 413 and 401', async () => {
    const headers = { 'X-Workflow-ID': 'wf_oas_vectors' };
    for (const path of ['/api/v1/memory/vector', '/api/v1/memory/vector/set']) {
      const stored = await exercise(
        'POST',
        path,
        { key: 'doc-42', embedding: [0.12, -0.48, 0.33, 0.91], metadata: { source: 'finance' } },
        { headers },
      );
      expect(stored.body).toMatchObject({ key: 'doc-42', scope: 'workflow', dimensions: 4 });
      expect((await exercise('POST', path, { key: 'doc-42', embedding: ['NaN'] }, { headers })).status).toBe(
        400,
      );
      expect((await exercise('POST', path, { key: 'other', embedding: [1, 2, 3] }, { headers })).status).toBe(
        409,
      );
      const big = { key: 'big', embedding: [1, 2, 3, 4], metadata: { text: 'x'.repeat(70_000) } };
      expect((await exercise('POST', path, big, { headers })).status).toBe(413);
      expect((await exercise('POST', path, { key: 'doc-42', embedding: [1] }, { key: false })).status).toBe(
        401,
      );
    }
    const read = await exercise('GET', '/api/v1/memory/vector/doc-42', undefined, { headers });
    expect(read.body).toMatchObject({ key: 'doc-42', metadata: { source: 'finance' }, dimensions: 4 });
    expect((await exercise('GET', '/api/v1/memory/vector/absent', undefined, { headers })).status).toBe(404);
    expect((await exercise('GET', '/api/v1/memory/vector/a%01b')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/memory/vector/doc-42', undefined, { key: false })).status).toBe(
      401,
    );
    const search = '/api/v1/memory/vector/search';
    const found = await exercise(
      'POST',
      search,
      { query_embedding: [0.1, -0.5, 0.3, 0.9], top_k: 3 },
      { headers },
    );
    expect(found.body.results).toMatchObject([{ key: 'doc-42', scope: 'workflow' }]);
    expect((await exercise('POST', search, { query_embedding: [1, 0], limit: 2 })).status).toBe(400);
    const wide = { query_embedding: [1, 2], filters: { text: 'x'.repeat(1024 * 1024) } };
    expect((await exercise('POST', search, wide)).status).toBe(413);
    expect((await exercise('POST', search, { embedding: [1, 2] }, { key: false })).status).toBe(401);
    const removed = await exercise('DELETE', '/api/v1/memory/vector/doc-42', undefined, { headers });
    expect(removed.body).toMatchObject({ key: 'doc-42', deleted: true });
    expect((await exercise('DELETE', '/api/v1/memory/vector/doc-42?scope=tenant')).status).toBe(400);
    expect((await exercise('DELETE', '/api/v1/memory/vector/doc-42', undefined, { key: false })).status).toBe(
      401,
    );
    const old = '/api/v1/memory/vector/delete';
    expect((await exercise('POST', old, { key: 'doc-42' }, { headers })).body.deleted).toBe(false);
    expect((await exercise('POST', old, { key: 'doc-42', scope: 'actor' })).status).toBe(400);
    expect((await exercise('POST', old, bodyOfSize(1024 * 1024 + 1))).status).toBe(413);
    expect((await exercise('POST', old, { key: 'doc-42' }, { key: false })).status).toBe(401);
  });

  it('memory events: SSE and history 200, the WebSocket 101; 400 and 401 for each', async () => {
    const record = (template: string, status: number) => {
      const key = `GET ${template}`;
      seen.set(key, new Set([...(seen.get(key) ?? []), String(status)]));
    };
    const sse = '/api/v1/memory/events/sse';
    const abort = new AbortController();
    const response = await fetch(`${base}${sse}?scope=global`, { headers: AUTH, signal: abort.signal });
    const first = new TextDecoder().decode((await response.body!.getReader().read()).value);
    abort.abort();
    const recorded = { method: 'GET', path: sse, contentType: response.headers.get('content-type') };
    validator.expectMatches({ ...recorded, status: response.status, body: first });
    record(sse, response.status);
    expect(first).toMatch(/^retry: \d+\n/);
    expect((await exercise('GET', `${sse}?key=`)).status).toBe(400);
    expect((await exercise('GET', sse, undefined, { key: false })).status).toBe(401);

    const history = '/api/v1/memory/events/history';
    await exercise('POST', '/api/v1/memory/set', { key: 'oas-event', data: 1, scope: 'global' });
    const page = await exercise('GET', `${history}?key=oas-*&limit=1`);
    expect(page.body.events).toMatchObject([{ key: 'oas-event', type: 'memory_change' }]);
    expect((await exercise('GET', `${history}?limit=0`)).status).toBe(400);
    expect((await exercise('GET', history, undefined, { key: false })).status).toBe(401);

    const ws = '/api/v1/memory/events/ws';
    const wsBase = base.replace(/^http/, 'ws');
    const socket = new WebSocket(`${wsBase}${ws}?api_key=${KEY}`);
    const [upgrade] = (await once(socket, 'upgrade')) as [IncomingMessage];
    validator.expectMatches({
      method: 'GET',
      path: ws,
      status: upgrade.statusCode!,
      contentType: null,
      body: '',
    });
    record(ws, upgrade.statusCode!);
    expect(upgrade.statusCode).toBe(101);
    socket.close();
    await once(socket, 'close');
    // Refused handshakes are problem documents too.
    const refused = new WebSocket(`${wsBase}${ws}`);
    refused.on('error', () => {});
    const [, answer] = (await once(refused, 'unexpected-response')) as [unknown, IncomingMessage];
    let text = '';
    for await (const chunk of answer) text += chunk;
    const body = JSON.parse(text);
    validator.expectMatches({
      ...recorded,
      path: ws,
      contentType: answer.headers['content-type']!,
      status: answer.statusCode!,
      body,
    });
    record(ws, answer.statusCode!);
    expect(answer.statusCode).toBe(401);
    // A plain GET is not a handshake: 400, telling the client to open a WebSocket.
    expect((await exercise('GET', ws)).status).toBe(400);
  });

  it('observability webhook: settings, status, DLQ and redrive; 200, 204, 400, 404, 409, 413 and 401', async () => {
    const path = '/api/v1/settings/observability-webhook';
    // Nothing configured yet: 404 for the settings and their removal, 409 for a redrive.
    expect((await exercise('GET', path)).status).toBe(404);
    expect((await exercise('DELETE', path)).status).toBe(404);
    expect((await exercise('POST', `${path}/redrive`)).status).toBe(409);
    expect((await exercise('POST', path, { url: 'ftp://collector.example.com' })).status).toBe(400);
    expect((await exercise('POST', path, bodyOfSize(64 * 1024 + 1))).status).toBe(413);
    const set = await exercise('POST', path, {
      url: `${base}/collector`,
      secret: 's',
      headers: { 'X-Tenant': 'a' },
    });
    expect(set.status).toBe(200);
    expect((await exercise('GET', path)).status).toBe(200);
    expect((await exercise('GET', `${path}/status`)).status).toBe(200);
    expect((await exercise('GET', `${path}/dlq?limit=5`)).status).toBe(200);
    expect((await exercise('GET', `${path}/dlq?limit=0`)).status).toBe(400);
    expect((await exercise('DELETE', `${path}/dlq`)).status).toBe(200);
    expect((await exercise('POST', `${path}/redrive`)).status).toBe(200);
    expect((await exercise('POST', `${path}/redrive`, { batch_ids: 'obsb_x' })).status).toBe(400);
    expect((await exercise('POST', `${path}/redrive`, { batch_ids: ['obsb_unknown'] })).status).toBe(404);
    expect((await exercise('POST', `${path}/redrive`, bodyOfSize(64 * 1024 + 1))).status).toBe(413);
    expect((await exercise('DELETE', path)).status).toBe(204);
    for (const [method, where] of [
      ['GET', path],
      ['POST', path],
      ['DELETE', path],
      ['GET', `${path}/status`],
      ['GET', `${path}/dlq`],
      ['DELETE', `${path}/dlq`],
      ['POST', `${path}/redrive`],
    ] as const) {
      expect((await exercise(method, where, undefined, { key: false })).status).toBe(401);
    }
  });

  it('approvals: request (both paths), status, decision, list and awaiter-status; 400, 404, 409, 413 and 401', async () => {
    const target = await executionAgent('answer');
    const nodeId = target.split('.')[0]!;
    const id = await queuedExecution(target);
    // No dispatcher runs in this app: the execution is moved to running as a dispatch would.
    await handle.db('executions').where({ execution_id: id }).update({ status: 'running' });
    const apr = `oas-${id}`;
    const request = {
      approval_request_id: apr,
      approval_request_url: 'https://review.example.com/r',
      expires_in_hours: 1,
      callback_url: 'http://127.0.0.1:9/webhooks/approval',
    };
    const paths = [
      `/api/v1/executions/${id}/request-approval`,
      `/api/v1/agents/${nodeId}/executions/${id}/request-approval`,
    ];
    for (const path of paths) {
      expect((await exercise('POST', path, request)).status).toBe(200);
      expect((await exercise('POST', path, { ...request, approval_request_url: 'ftp://x' })).status).toBe(
        400,
      );
      expect((await exercise('POST', path, bodyOfSize(64 * 1024 + 1))).status).toBe(413);
      expect((await exercise('POST', path, { ...request, approval_request_id: `${apr}-2` })).status).toBe(
        409,
      );
      expect((await exercise('POST', path.replace(id, 'exec_oas_missing'), request)).status).toBe(404);
      expect((await exercise('POST', path, request, { key: false })).status).toBe(401);
    }
    const status = `/api/v1/executions/${id}/approval-status`;
    expect((await exercise('GET', `${status}?approval_request_id=${apr}`)).body.status).toBe('pending');
    expect((await exercise('GET', `${status}?approval_request_id=`)).status).toBe(400);
    expect((await exercise('GET', `${status}?approval_request_id=nope`)).status).toBe(404);
    expect((await exercise('GET', status, undefined, { key: false })).status).toBe(401);
    const agentStatus = `/api/v1/agents/${nodeId}/executions/${id}/approval-status`;
    expect((await exercise('GET', agentStatus)).body.status).toBe('pending');
    expect((await exercise('GET', `${agentStatus}?approval_request_id=`)).status).toBe(400);
    expect((await exercise('GET', agentStatus.replace(nodeId, 'oas-other-node'))).status).toBe(404);
    expect((await exercise('GET', agentStatus, undefined, { key: false })).status).toBe(401);
    const list = await exercise('GET', '/api/v1/approvals?status=pending&limit=1');
    expect(list.body.approvals).toHaveLength(1);
    expect((await exercise('GET', '/api/v1/approvals?limit=0')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/approvals', undefined, { key: false })).status).toBe(401);

    const webhook = '/api/v1/webhooks/approval';
    const decision = { approval_request_id: apr, decision: 'approved', feedback: 'Ship it.' };
    expect((await exercise('POST', webhook, decision)).body.execution_status).toBe('running');
    expect((await exercise('POST', webhook, { ...decision, decision: 'rejected' })).status).toBe(409);
    expect((await exercise('POST', webhook, { ...decision, decision: 'maybe' })).status).toBe(400);
    expect((await exercise('POST', webhook, bodyOfSize(64 * 1024 + 1))).status).toBe(413);
    expect((await exercise('POST', webhook, { ...decision, approval_request_id: 'oas-nobody' })).status).toBe(
      404,
    );
    expect((await exercise('POST', webhook, decision, { key: false })).status).toBe(401);

    const awaiter = `/api/v1/agents/${nodeId}/executions/${id}/awaiter-status`;
    expect(
      (await exercise('POST', awaiter, { status: 'waiting', reason: 'child paused' })).body.recorded,
    ).toBe(true);
    expect((await exercise('POST', awaiter, { status: 'paused' })).status).toBe(400);
    expect((await exercise('POST', awaiter, bodyOfSize(64 * 1024 + 1))).status).toBe(413);
    expect(
      (await exercise('POST', awaiter.replace(id, 'exec_oas_missing'), { status: 'waiting' })).status,
    ).toBe(404);
    expect((await exercise('POST', awaiter, { status: 'waiting' }, { key: false })).status).toBe(401);
  });

  it('connector: every operation under both prefixes; 200, 202, 400, 401, 403, 404, 409, 413, 502, 503 and 504', async () => {
    const token = { Authorization: `Bearer ${CONNECTOR_TOKEN}` };
    const as = (headers: Record<string, string>) => ({ key: false, headers });
    // Other deployments on the same database: the connector disabled, and granting nothing.
    const disabledConfig = defaultConfig();
    disabledConfig.api.auth = config.api.auth;
    const disabled = await listen(createApp({ db: handle.db, config: disabledConfig, log: silentLogger() }));
    const bareConfig = defaultConfig();
    bareConfig.connector.token = CONNECTOR_TOKEN;
    bareConfig.connector.capabilities = [];
    const bare = await listen(createApp({ db: handle.db, config: bareConfig, log: silentLogger() }));
    // Agents: one that restarts, one that does not implement it (404), one that never answers.
    const restartAgent = async (answer: boolean) => {
      const server = createServer((req, res) => {
        req.resume();
        if (req.url === '/_internal/restart' && answer) res.writeHead(202).end();
        else if (req.url !== '/_internal/restart') res.writeHead(404).end();
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      servers.push(server);
      const id = uniqueNodeId(answer ? 'oas-restarts' : 'oas-hangs');
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      expect((await exercise('POST', '/api/v1/nodes/register', registration(id, url))).status).toBe(201);
      await exercise('POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
      return id;
    };
    const restarts = await restartAgent(true);
    const hangs = await restartAgent(false);
    const unsupported = (await executionAgent('answer')).split('.')[0]!;
    const unreachable = await registerUnstartedAgent({
      controlPlaneUrl: base,
      nodeId: uniqueNodeId('oas-gone'),
      apiKey: KEY,
      heartbeatMs: 60_000,
    });
    agents.push(unreachable);

    const timeouts: Array<Promise<unknown>> = [];
    for (const prefix of CONNECTOR_PREFIXES) {
      const versions = `${prefix}/reasoners/${restarts}/versions`;
      const paths: Array<[string, string, unknown?]> = [
        ['GET', `${prefix}/manifest`],
        ['GET', `${prefix}/reasoners`],
        ['GET', `${prefix}/reasoners/${restarts}.summarize`],
        ['GET', `${prefix}/groups`],
        ['GET', `${prefix}/groups/${restarts}`],
        ['GET', versions],
        ['GET', `${versions}/1.0.0`],
        ['PUT', `${versions}/1.0.0/weight`, { weight: 100 }],
        ['POST', `${versions}/1.0.0/restart`],
      ];
      for (const [method, path, body] of paths) {
        const ok = await exercise(method, path, body, as(token));
        expect(ok.status, path).toBe(path.endsWith('/restart') ? 202 : 200);
        expect((await exercise(method, path, body, { key: false })).status).toBe(401);
        expect((await exercise(method, path, body, { ...as(token), at: disabled })).status).toBe(503);
        if (!path.endsWith('/manifest')) {
          expect((await exercise(method, path, body, { ...as(token), at: bare })).status).toBe(403);
        }
        if (/\/(reasoners|groups)\/./.test(path)) {
          const missing = path.replace(restarts, `${restarts}-missing`);
          expect((await exercise(method, missing, body, as(token))).status, missing).toBe(404);
        }
      }
      for (const list of [`${prefix}/reasoners?limit=0`, `${prefix}/groups?cursor=x.y`]) {
        expect((await exercise('GET', list, undefined, as(token))).status, list).toBe(400);
      }
      const weight = `${versions}/1.0.0/weight`;
      expect((await exercise('PUT', weight, { weight: -1 }, as(token))).status).toBe(400);
      expect((await exercise('PUT', weight, bodyOfSize(2048), as(token))).status).toBe(413);
      const restart = (id: string) =>
        exercise('POST', `${prefix}/reasoners/${id}/versions/1.0.0/restart`, undefined, as(token));
      expect((await restart(unsupported)).status).toBe(409);
      expect((await restart(unreachable.nodeId)).status).toBe(502);
      timeouts.push(restart(hangs).then((answer) => expect(answer.status).toBe(504)));
    }
    await Promise.all(timeouts);

    // Stored configuration under the connector (config_management), as the config-store feature
    // describes it; reload needs a server started with config_source db (one that can, below).
    const reloadableConfig = () => {
      const loaded = defaultConfig();
      loaded.api.auth = config.api.auth;
      loaded.configSource = 'db';
      loaded.connector = { ...config.connector };
      return loaded;
    };
    let failReload = false;
    const reloading = await listen(
      createApp({
        db: handle.db,
        config: reloadableConfig(),
        log: silentLogger(),
        reloadConfig: async () => {
          if (!failReload) return reloadableConfig();
          const issue = {
            key: 'server.port',
            source: 'stored config control-plane',
            message: 'must be a port',
          };
          throw new ConfigError([{ ...issue, line: `server.port (${issue.source}): ${issue.message}` }]);
        },
      }),
    );
    for (const prefix of CONNECTOR_PREFIXES) {
      const configs = `${prefix}/configs`;
      const name = `${configs}/oas-connector`;
      const text = { ...as({ ...token, 'content-type': 'text/plain' }) };
      const paths: Array<[string, string, unknown?]> = [
        ['PUT', name, 'team: one\n'],
        ['GET', configs],
        ['GET', name],
        ['GET', `${name}/versions`],
        ['GET', `${name}/versions/1`],
        ['DELETE', name],
        ['POST', `${configs}/reload`],
      ];
      expect((await exercise('PUT', name, 'team: zero\n', text)).status).toBe(201);
      for (const [method, path, body] of paths) {
        const options = method === 'PUT' ? text : as(token);
        const answer = await exercise(
          method,
          path,
          body,
          method === 'POST' ? { ...options, at: reloading } : options,
        );
        expect(answer.status, `${method} ${path}`).toBe(method === 'DELETE' ? 204 : 200);
        expect((await exercise(method, path, body, { key: false })).status).toBe(401);
        expect((await exercise(method, path, body, { ...options, at: disabled })).status).toBe(503);
        expect((await exercise(method, path, body, { ...options, at: bare })).status).toBe(403);
        if (path !== configs && method !== 'PUT' && method !== 'POST') {
          const missing = path.replace('oas-connector', 'oas-missing');
          expect((await exercise(method, missing, undefined, as(token))).status, missing).toBe(404);
          const invalid = path.replace('oas-connector', 'bad%20name');
          expect((await exercise(method, invalid, undefined, as(token))).status, invalid).toBe(400);
        }
      }
      expect((await exercise('PUT', `${configs}/bad%20name`, 'x', text)).status).toBe(400);
      expect((await exercise('PUT', name, 'x'.repeat(1024 * 1024 + 1), text)).status).toBe(413);
      expect((await exercise('POST', `${configs}/reload`, undefined, as(token))).status).toBe(503);
      failReload = true;
      expect(
        (await exercise('POST', `${configs}/reload`, undefined, { ...as(token), at: reloading })).status,
      ).toBe(400);
      failReload = false;
    }
  });

  it('config storage: list, put, get (JSON and raw), versions, delete, reload; 200, 201, 204, 400, 404, 413, 401 and 503', async () => {
    const yaml = { 'content-type': 'text/yaml' };
    const one = '/api/v1/configs/oas-config';
    expect((await exercise('PUT', one, 'a: 1\n', { headers: yaml })).status).toBe(201);
    expect(
      (await exercise('PUT', one, 'a: 2\n', { headers: { ...yaml, 'X-Updated-By': 'oas' } })).status,
    ).toBe(200);
    expect((await exercise('PUT', one, 'x'.repeat(1024 * 1024 + 1), { headers: yaml })).status).toBe(413);
    const invalid = await exercise(
      'PUT',
      `/api/v1/configs/${STORED_CONFIG_NAME}`,
      'server:\n  port: eighty\n',
      {
        headers: yaml,
      },
    );
    expect(invalid.body.errors).toEqual([
      { field: 'server.port', key: 'server.port', source: 'request body', message: expect.any(String) },
    ]);
    expect((await exercise('PUT', '/api/v1/configs/a%20b', 'a', { headers: yaml })).status).toBe(400);
    expect((await exercise('PUT', one, 'a', { key: false, headers: yaml })).status).toBe(401);
    expect((await exercise('GET', '/api/v1/configs')).body.configs).toEqual([
      expect.objectContaining({ name: 'oas-config' }),
    ]);
    expect((await exercise('GET', '/api/v1/configs', undefined, { key: false })).status).toBe(401);
    expect((await exercise('GET', one)).body.content).toBe('a: 2\n');
    expect((await exercise('GET', one, undefined, { headers: { accept: 'text/plain' } })).body).toBe(
      'a: 2\n',
    );
    expect((await exercise('GET', '/api/v1/configs/reload')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/configs/absent')).status).toBe(404);
    expect((await exercise('GET', one, undefined, { key: false })).status).toBe(401);
    expect((await exercise('GET', `${one}/versions`)).body.versions).toHaveLength(2);
    expect((await exercise('GET', '/api/v1/configs/a%20b/versions')).status).toBe(400);
    expect((await exercise('GET', '/api/v1/configs/absent/versions')).status).toBe(404);
    expect((await exercise('GET', `${one}/versions`, undefined, { key: false })).status).toBe(401);
    expect((await exercise('GET', `${one}/versions/1`)).body.content).toBe('a: 1\n');
    expect(
      (await exercise('GET', `${one}/versions/1`, undefined, { headers: { accept: 'text/yaml' } })).body,
    ).toBe('a: 1\n');
    expect((await exercise('GET', `${one}/versions/0`)).status).toBe(400);
    expect((await exercise('GET', `${one}/versions/9`)).status).toBe(404);
    expect((await exercise('GET', `${one}/versions/1`, undefined, { key: false })).status).toBe(401);
    expect((await exercise('DELETE', one)).status).toBe(204);
    expect((await exercise('DELETE', one)).status).toBe(404);
    expect((await exercise('DELETE', '/api/v1/configs/a%20b')).status).toBe(400);
    expect((await exercise('DELETE', one, undefined, { key: false })).status).toBe(401);
    expect((await exercise('POST', '/api/v1/configs/reload')).status).toBe(503);
    expect((await exercise('POST', '/api/v1/configs/reload', undefined, { key: false })).status).toBe(401);

    // A second app on the same database, started as with SERVICE_CONFIG_SOURCE=db.
    const env = { SERVICE_CONFIG_SOURCE: 'db', SERVICE_API_KEY: KEY, SERVICE_CONFIG_FILE: '' };
    const dbConfig = await loadConfig({ env, db: handle.db });
    const at = await listen(
      createApp({
        db: handle.db,
        config: dbConfig,
        log: silentLogger(),
        reloadConfig: () => loadConfig({ env, db: handle.db }),
      }),
    );
    await putStoredConfig(handle.db, { name: STORED_CONFIG_NAME, body: 'discovery:\n  cache_ttl: 5s\n' });
    const reloaded = await exercise('POST', '/api/v1/configs/reload', undefined, { at });
    expect(reloaded.body).toMatchObject({
      changed: ['discovery.cache_ttl'],
      restart_required: ['discovery.cache_ttl'],
    });
    await putStoredConfig(handle.db, { name: STORED_CONFIG_NAME, body: 'discovery:\n  cache_ttl: soon\n' });
    const refused = await exercise('POST', '/api/v1/configs/reload', undefined, { at });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      expect.objectContaining({
        key: 'discovery.cache_ttl',
        source: `database config "${STORED_CONFIG_NAME}"`,
      }),
    ]);
    await handle.db('configs').where({ name: STORED_CONFIG_NAME }).delete();
  });

  it('MCP: initialize 200, notification 202, stream 200, end 200; 400, 404, 406, 413, 415 and 401', async () => {
    const mcp = { Accept: 'application/json, text/event-stream' };
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oas', version: '1' } },
    };
    const opened = await exercise('POST', '/mcp', initialize, { headers: mcp });
    expect(opened.status).toBe(200);
    const session = { ...mcp, 'Mcp-Session-Id': opened.headers.get('mcp-session-id')! };
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    expect((await exercise('POST', '/mcp', initialized, { headers: session })).status).toBe(202);
    const abort = new AbortController();
    const stream = await fetch(`${base}/mcp`, {
      headers: { ...AUTH, ...session, Accept: 'text/event-stream' },
      signal: abort.signal,
    });
    abort.abort();
    validator.expectMatches({
      method: 'GET',
      path: '/mcp',
      status: stream.status,
      contentType: stream.headers.get('content-type'),
      body: '',
    });
    seen.set('GET /mcp', new Set(['200']));
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const gone = { ...mcp, 'Mcp-Session-Id': '00000000-0000-4000-8000-000000000000' };
    expect((await exercise('POST', '/mcp', list, { headers: mcp })).status).toBe(400);
    expect((await exercise('POST', '/mcp', list, { headers: gone })).status).toBe(404);
    expect((await exercise('POST', '/mcp', bodyOfSize(4 * 1024 * 1024 + 1), { headers: mcp })).status).toBe(
      413,
    );
    expect((await exercise('POST', '/mcp', initialize, { headers: mcp, key: false })).status).toBe(401);
    const jsonOnly = { Accept: 'application/json' };
    expect((await exercise('POST', '/mcp', initialize, { headers: jsonOnly })).status).toBe(406);
    const asText = { ...mcp, 'content-type': 'text/plain' };
    expect((await exercise('POST', '/mcp', initialize, { headers: asText })).status).toBe(415);
    expect((await exercise('GET', '/mcp', undefined, { headers: { ...session, ...jsonOnly } })).status).toBe(
      406,
    );
    for (const method of ['GET', 'DELETE']) {
      expect((await exercise(method, '/mcp', undefined, { headers: mcp })).status).toBe(400);
      expect((await exercise(method, '/mcp', undefined, { headers: gone })).status).toBe(404);
      expect((await exercise(method, '/mcp', undefined, { headers: session, key: false })).status).toBe(401);
    }
    // A Host that is not a loopback name, as a DNS-rebinding page sends: fetch cannot set Host.
    for (const method of ['POST', 'GET', 'DELETE']) {
      const answer = await rawRequest(method, '/mcp', { ...AUTH, ...session, host: 'attacker.example:8080' });
      validator.expectMatches({ method, path: '/mcp', ...answer });
      seen.get(`${method} /mcp`)!.add(String(answer.status));
      expect(answer.status).toBe(403);
    }
    expect((await exercise('DELETE', '/mcp', undefined, { headers: session })).status).toBe(200);
  });

  it('exercised every documented status of every operation', () => {
    const missing: string[] = [];
    for (const [method, template, operation] of operations(published)) {
      const statuses = seen.get(`${method} ${template}`) ?? new Set();
      for (const status of Object.keys(operation.responses)) {
        if (status !== 'default' && !statuses.has(status)) missing.push(`${method} ${template} ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
