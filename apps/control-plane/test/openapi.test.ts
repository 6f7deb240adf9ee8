import { createServer, type Server } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import { migrateLatest, openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { call, registration, uniqueNodeId } from './helpers/control-plane.ts';
import { createOpenApiValidator, METHODS, type OpenApiValidator } from './helpers/openapi.ts';

/**
 * The control plane's OpenAPI document (GET /api/v1/openapi.json): valid OpenAPI 3.1, one
 * operation for each mounted route and no other, and real answers (the happy and error paths of
 * every operation, through the real app on a real database) that match its response schemas.
 */
const KEY = 'openapi-test-key';
const AUTH = { 'X-API-Key': KEY };

let handle: TestDatabase;
const servers: Server[] = [];
let base: string;
let published: Record<string, any>;
let validator: OpenApiValidator;
/** `METHOD template` → the statuses real answers were validated for. */
const seen = new Map<string, Set<string>>();

async function listen(app: ReturnType<typeof createApp>): Promise<string> {
  const server = createServer(app.callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  handle = await openTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  const config = defaultConfig();
  config.api.auth = { apiKey: KEY, skipPaths: [] };
  base = await listen(createApp({ db: handle.db, config, log: silentLogger() }));
  const response = await fetch(`${base}/api/v1/openapi.json`);
  published = (await response.json()) as Record<string, any>;
  validator = createOpenApiValidator(published);
});

afterAll(async () => {
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

/** A JSON body of `bytes` bytes: over a limit of bytes - 1. */
function bodyOfSize(bytes: number): string {
  const text = JSON.stringify({ pad: '' });
  return JSON.stringify({ pad: 'x'.repeat(bytes - text.length) });
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
      expect(
        Object.keys(operation.responses).some((status) => status.startsWith('2')),
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
    const broken = await openTestDatabase();
    const at = await listen(createApp({ db: broken.db, log: silentLogger() }));
    await broken.close();
    expect((await exercise('GET', '/api/v1/health', undefined, { at })).status).toBe(503);
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
