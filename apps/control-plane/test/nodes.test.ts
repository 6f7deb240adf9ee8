import { readFileSync } from 'node:fs';
import { isProblem } from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentUrl,
  compileJsonSchema,
  InvalidSchemaError,
  MAX_TRAFFIC_WEIGHT,
  NODES_TOPIC,
} from '../src/modules/nodes/index.ts';
import { LIST_ANSWER_BYTES } from '../src/modules/nodes/routes.ts';
import type { NodeInstanceRecord } from '../src/modules/nodes/schemas.ts';
import { groupByNode } from '../src/modules/nodes/views.ts';
import { startTestAgent, type TestAgent } from './helpers/agents.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';

let cp: TestControlPlane;
let agent: TestAgent;
const seen: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  cp = await startTestControlPlane();
  agent = await startTestAgent();
  cp.events.subscribe(NODES_TOPIC, (event) => seen.push(event));
});

afterAll(async () => {
  await agent?.close();
  await cp?.close();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function expectProblem(
  response: { status: number; headers: Headers; body: any },
  status: number,
  code: string,
) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(isProblem(response.body)).toBe(true);
  expect(response.body.code).toBe(code);
}

async function register(id: string, overrides: Record<string, unknown> = {}) {
  const response = await call(
    cp.base,
    'POST',
    '/api/v1/nodes/register',
    registration(id, agent.url, overrides),
  );
  expect([200, 201]).toContain(response.status);
  return response.body;
}

describe('POST /api/v1/nodes/register', () => {
  it('answers 201 with the node record in starting, never pending_approval', async () => {
    const id = uniqueNodeId();
    const response = await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/v1/nodes/${id}`);
    expect(response.body).toMatchObject({
      id,
      node_id: id,
      version: '1.0.0',
      base_url: agent.url,
      deployment_type: 'long_running',
      tags: ['test'],
      metadata: { team: 'qa' },
      lifecycle_status: 'starting',
      status_reason: 'registered',
      admin_state: 'active',
      routable: false,
      traffic_weight: 100,
      last_heartbeat: null,
      heartbeat_ttl_seconds: 15,
      heartbeat_interval_seconds: 5,
    });
    expect(response.body.status).not.toBe('pending_approval');
    expect(response.body.reasoners[0]).toMatchObject({ id: 'summarize', tags: ['nlp'] });
    expect(response.body.skills[0]).toMatchObject({ id: 'word_count' });
    expect(response.body.registered_at).toMatch(ISO);
    expect(seen).toContainEqual(
      expect.objectContaining({ type: 'node.registered', node_id: id, version: '1.0.0' }),
    );
  });

  it('also registers through POST /api/v1/nodes', async () => {
    const id = uniqueNodeId();
    const response = await call(cp.base, 'POST', '/api/v1/nodes', registration(id, agent.url));
    expect(response.status).toBe(201);
    expect(response.body.node_id).toBe(id);
  });

  it('replaces an instance registered again with the same id and version (200)', async () => {
    const id = uniqueNodeId();
    await register(id);
    const again = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, `${agent.url}/`, { tags: ['replaced'], skills: [] }),
    );
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ tags: ['replaced'], skills: [], lifecycle_status: 'starting' });
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body.instances).toHaveLength(1);
  });

  it('adds a second instance for a new version of the same node id', async () => {
    const id = uniqueNodeId();
    await register(id, { version: '1.0.0' });
    const second = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, agent.url, { version: '2.0.0' }),
    );
    expect(second.status).toBe(201);
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body.instances.map((i: any) => i.version).sort()).toEqual(['1.0.0', '2.0.0']);
  });

  it('treats an empty version (as the TypeScript SDK sends) as 0.0.0', async () => {
    const id = uniqueNodeId();
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, agent.url, { version: '' }),
    );
    expect(response.status).toBe(201);
    expect(response.body.version).toBe('0.0.0');
  });

  it('treats null optional members (as SDKs serialize None) as absent', async () => {
    const id = uniqueNodeId();
    const nulls = {
      description: null,
      input_schema: null,
      output_schema: null,
      tags: null,
      examples: null,
    };
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, agent.url, {
        public_url: null,
        tags: null,
        metadata: null,
        reasoners: [{ id: 'summarize', ...nulls, memory_config: null }],
        skills: [{ id: 'word_count', ...nulls }],
      }),
    );
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ public_url: null, tags: [], metadata: {} });
    expect(response.body.reasoners).toEqual([{ id: 'summarize', tags: [] }]);
    expect(response.body.skills).toEqual([{ id: 'word_count', tags: [] }]);
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body.reasoners).toEqual([{ id: 'summarize', tags: [] }]);
    // Required members stay required: null is not an id or a base URL.
    const missing = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, { base_url: null }),
    );
    expectProblem(missing, 400, 'invalid_request');
    expect(missing.body.errors.map((e: any) => e.field)).toContain('base_url');
    // A present member is still checked.
    const wrong = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, { reasoners: [{ id: 'r', input_schema: 'nope' }] }),
    );
    expectProblem(wrong, 400, 'invalid_request');
  });

  it('ignores unknown members so newer SDKs keep working', async () => {
    const id = uniqueNodeId();
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, agent.url, { did: 'did:web:x', vc_metadata: { a: 1 } }),
    );
    expect(response.status).toBe(201);
    expect(response.body).not.toHaveProperty('did');
  });

  it('answers 400 invalid_request naming each missing field', async () => {
    const response = await call(cp.base, 'POST', '/api/v1/nodes/register', { version: '1' });
    expectProblem(response, 400, 'invalid_request');
    const fields = response.body.errors.map((e: any) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['id', 'base_url']));
  });

  it('answers 400 for wrong types', async () => {
    const response = await call(cp.base, 'POST', '/api/v1/nodes/register', {
      id: 42,
      base_url: 'http://127.0.0.1:1',
      tags: 'nope',
      reasoners: {},
    });
    expectProblem(response, 400, 'invalid_request');
    const fields = response.body.errors.map((e: any) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['id', 'tags', 'reasoners']));
  });

  it('answers 400 for an empty body', async () => {
    expectProblem(await call(cp.base, 'POST', '/api/v1/nodes/register'), 400, 'invalid_request');
  });

  it('answers 400 for malformed JSON', async () => {
    const response = await call(cp.base, 'POST', '/api/v1/nodes/register', '{"id": "x",');
    expectProblem(response, 400, 'invalid_request');
    expect(response.body.detail).toMatch(/not valid JSON/);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const response = await call(cp.base, 'POST', '/api/v1/nodes/register', 'id=x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expectProblem(response, 400, 'invalid_request');
  });

  it('answers 413 payload_too_large for a body over 1 MiB', async () => {
    const huge = registration(uniqueNodeId(), agent.url, {
      metadata: { blob: 'x'.repeat(1024 * 1024 + 10) },
    });
    expectProblem(await call(cp.base, 'POST', '/api/v1/nodes/register', huge), 413, 'payload_too_large');
  });

  it('refuses hostile ids and URLs: dots, path tricks, markup, non-http schemes', async () => {
    for (const body of [
      registration('a.b', agent.url),
      registration('../etc', agent.url),
      registration('<script>alert(1)</script>', agent.url),
      registration("x'; drop table node_instances; --", agent.url),
      registration('ok-id', 'javascript:alert(1)'),
      registration('ok-id', 'file:///etc/passwd'),
      registration('x'.repeat(201), agent.url),
    ]) {
      const response = await call(cp.base, 'POST', '/api/v1/nodes/register', body);
      expectProblem(response, 400, 'invalid_request');
    }
    const fleet = await call(cp.base, 'GET', '/api/ui/v1/nodes');
    expect(fleet.status).toBe(200);
  });

  it('stores hostile strings inside metadata verbatim and returns them as JSON data', async () => {
    const id = uniqueNodeId();
    const hostile = {
      note: "</script><img src=x onerror=alert(1)>'; drop table node_instances; --\u2028\u{1F600}",
    };
    const body = await register(id, { metadata: hostile });
    expect(body.metadata).toEqual(hostile);
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body.metadata).toEqual(hostile);
  });

  it('answers 400 naming the field for a NUL character, which the database cannot store', async () => {
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, { metadata: { deep: ['ok', 'bad\u0000'] } }),
    );
    expectProblem(response, 400, 'invalid_request');
    expect(response.body.errors).toContainEqual({
      field: 'metadata.deep[1]',
      message: expect.stringMatching(/NUL/),
    });
    const path = await call(cp.base, 'POST', '/api/v1/nodes/a%00b/heartbeat', {});
    expectProblem(path, 404, 'not_found');
    const bulk = await call(cp.base, 'POST', '/api/v1/nodes/status/bulk', { node_ids: ['a\u0000'] });
    expectProblem(bulk, 400, 'invalid_request');
  });

  it('answers 400 naming the field for a lone UTF-16 surrogate in a value or key, which jsonb refuses', async () => {
    const value = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, { metadata: { deep: ['ok', 'bad\ud800'] } }),
    );
    expectProblem(value, 400, 'invalid_request');
    expect(value.body.errors).toContainEqual({
      field: 'metadata.deep[1]',
      message: expect.stringMatching(/surrogate/),
    });
    const key = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, { metadata: { 'k\udc00': 1 } }),
    );
    expectProblem(key, 400, 'invalid_request');
    expect(key.body.errors).toContainEqual({
      field: 'metadata["k\\udc00"]', // JSON.stringify escapes the lone surrogate
      message: expect.stringMatching(/surrogate/),
    });
    // A proper surrogate pair (an emoji) is well formed and stored as given.
    const id = uniqueNodeId();
    expect((await register(id, { metadata: { mood: 'ok \ud83d\ude00' } })).metadata).toEqual({
      mood: 'ok 😀',
    });
    const health = await call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, {
      state: 'ready',
      health: { note: '\udfff tail' },
    });
    expectProblem(health, 400, 'invalid_request');
    expect(health.body.errors).toContainEqual({
      field: 'health.note',
      message: expect.stringMatching(/surrogate/),
    });
  });
});

describe('function schemas are compiled at registration', () => {
  const fn = (id: string, extra: Record<string, unknown> = {}) => ({ id, tags: [], ...extra });

  it('answers 400 invalid_request naming the function and the field of a schema ajv cannot compile, and stores nothing', async () => {
    const id = uniqueNodeId('badschema');
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, agent.url, {
        reasoners: [
          fn('fine', { input_schema: { type: 'object' } }),
          fn('also_fine'),
          fn('broken', { input_schema: { type: 'strin' } }),
        ],
        skills: [
          fn('remote_ref', { input_schema: { $ref: 'https://schemas.example/x.json' } }),
          fn('bad_pattern', { output_schema: { type: 'string', pattern: '([a-z' } }),
        ],
      }),
    );
    expectProblem(response, 400, 'invalid_request');
    const byField = Object.fromEntries(response.body.errors.map((e: any) => [e.field, e.message]));
    expect(Object.keys(byField).sort()).toEqual([
      'reasoners[2].input_schema',
      'skills[0].input_schema',
      'skills[1].output_schema',
    ]);
    expect(byField['reasoners[2].input_schema']).toMatch(/^reasoner "broken": input_schema /);
    expect(byField['skills[0].input_schema']).toMatch(/^skill "remote_ref": .*https:\/\/schemas\.example/);
    expect(byField['skills[1].output_schema']).toMatch(/^skill "bad_pattern": output_schema /);
    expect(response.body.detail).toContain('reasoners[2].input_schema');
    expectProblem(await call(cp.base, 'GET', `/api/v1/nodes/${id}`), 404, 'not_found');
  });

  it('accepts what agent schema generators emit: unknown keywords, local $defs, 2020-12 and https $schema, a shared $id', async () => {
    const shared = { $id: 'https://agents.example/text.json', type: 'object' };
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId('genschema'), agent.url, {
        reasoners: [
          fn('pydantic', {
            input_schema: {
              title: 'In',
              type: 'object',
              properties: { item: { $ref: '#/$defs/Item' }, kind: { 'x-ui': 'select', enum: ['a', 'b'] } },
              $defs: { Item: { type: 'object', properties: { n: { type: 'integer' } } } },
              discriminator: { propertyName: 'kind' },
            },
          }),
          fn('zod2020', {
            input_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
            output_schema: { $schema: 'https://json-schema.org/draft-07/schema#', type: 'string' },
          }),
          fn('first_shared', { input_schema: shared }),
        ],
        skills: [fn('second_shared', { input_schema: shared, output_schema: { format: 'uuid' } })],
      }),
    );
    expect(response.status).toBe(201);
  });

  it('refuses a $schema it cannot honour, naming it', async () => {
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, {
        reasoners: [fn('old', { input_schema: { $schema: 'http://json-schema.org/draft-04/schema#' } })],
        skills: [],
      }),
    );
    expectProblem(response, 400, 'invalid_request');
    expect(response.body.errors).toEqual([
      { field: 'reasoners[0].input_schema', message: expect.stringContaining('draft-04') },
    ]);
  });

  it('compiles reusable validators through the module index', () => {
    const compiled = compileJsonSchema({
      type: 'object',
      properties: { text: { type: 'string' }, items: { type: 'array', items: { type: 'integer' } } },
      required: ['text'],
    });
    expect(compiled.validate({ text: 'hi', items: [1] })).toEqual([]);
    expect(compiled.validate({ items: [1, 'x'] })).toEqual([
      { field: 'text', message: expect.stringContaining('text') },
      { field: 'items[1]', message: 'must be integer' },
    ]);
    expect(compileJsonSchema({ type: 'object', required: ['text'] })).toBe(
      compileJsonSchema({ type: 'object', required: ['text'] }),
    );
    expect(() => compileJsonSchema({ type: 7 })).toThrow(InvalidSchemaError);
  });

  it('a schema whose $id names a meta-schema is refused and leaves every later registration compiling', async () => {
    const register = (input_schema: Record<string, unknown>) =>
      call(
        cp.base,
        'POST',
        '/api/v1/nodes/register',
        registration(uniqueNodeId('metaid'), agent.url, {
          reasoners: [fn('r', { input_schema })],
          skills: [],
        }),
      );
    for (const hostile of [
      { $id: 'http://json-schema.org/draft-07/schema#', type: 'object' },
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'https://json-schema.org/draft/2020-12/schema',
      },
      {
        $schema: 'https://json-schema.org/draft/2019-09/schema',
        properties: { a: { $id: 'https://json-schema.org/draft/2019-09/meta/core' } },
      },
    ]) {
      const refused = await register(hostile);
      expectProblem(refused, 400, 'invalid_request');
      expect(refused.body.errors).toEqual([
        { field: 'reasoners[0].input_schema', message: expect.any(String) },
      ]);
    }
    // Schemas never compiled before (a fresh title each), in each draft, still compile.
    const fresh = uniqueNodeId('title');
    for (const $schema of [
      undefined,
      'https://json-schema.org/draft/2020-12/schema',
      'https://json-schema.org/draft/2019-09/schema',
    ]) {
      const response = await register({ $schema, title: fresh, type: 'object', required: ['q'] });
      expect(response.status).toBe(201);
    }
    expect(compileJsonSchema({ title: fresh, type: 'object', required: ['q'] }).validate({})).toEqual([
      { field: 'q', message: expect.stringContaining('q') },
    ]);
  });

  it('refuses an $async schema, whose validator would pass every input', async () => {
    expect(() => compileJsonSchema({ $async: true, type: 'object', required: ['q'] })).toThrow(
      InvalidSchemaError,
    );
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId('async'), agent.url, {
        reasoners: [fn('r', { input_schema: { $async: true, type: 'object' } })],
        skills: [],
      }),
    );
    expectProblem(response, 400, 'invalid_request');
    expect(response.body.errors).toEqual([
      { field: 'reasoners[0].input_schema', message: expect.stringContaining('$async') },
    ]);
  });
});

describe('duplicate function ids in one registration', () => {
  for (const [what, reasoners, skills, field, first] of [
    ['two reasoners', [{ id: 'a' }, { id: 'b' }, { id: 'a' }], [], 'reasoners[2].id', 'reasoners[0].id'],
    ['two skills', [], [{ id: 's' }, { id: 's' }], 'skills[1].id', 'skills[0].id'],
    ['a reasoner and a skill', [{ id: 'both' }], [{ id: 'both' }], 'skills[0].id', 'reasoners[0].id'],
  ] as const) {
    it(`answers 400 naming both places for ${what}, and stores nothing`, async () => {
      const id = uniqueNodeId('dup');
      const response = await call(
        cp.base,
        'POST',
        '/api/v1/nodes/register',
        registration(id, agent.url, { reasoners, skills }),
      );
      expectProblem(response, 400, 'invalid_request');
      expect(response.body.errors).toEqual([{ field, message: expect.stringContaining(first) }]);
      expectProblem(await call(cp.base, 'GET', `/api/v1/nodes/${id}`), 404, 'not_found');
    });
  }
});

describe('agent URLs are an origin plus an optional path', () => {
  it('answers 400 naming the field for a base_url or public_url with a query, a fragment or credentials, and stores nothing', async () => {
    const { host } = new URL(agent.url);
    for (const field of ['base_url', 'public_url'] as const) {
      for (const url of [
        `${agent.url}/internal/admin?x=1`,
        `${agent.url}/internal/admin?`,
        `${agent.url}/#top`,
        `http://agent:s3cret@${host}`,
        `http://token@${host}/a`,
      ]) {
        const id = uniqueNodeId('badurl');
        const body = registration(id, agent.url, { [field]: url });
        const response = await call(cp.base, 'POST', '/api/v1/nodes/register', body);
        expectProblem(response, 400, 'invalid_request');
        expect(response.body.errors).toEqual([
          { field, message: expect.stringMatching(/^use an origin and an optional path only/) },
        ]);
        expect(JSON.stringify(response.body)).not.toContain('s3cret');
        expectProblem(await call(cp.base, 'GET', `/api/v1/nodes/${id}`), 404, 'not_found');
      }
    }
  });

  it('answers 400, not 500, for a URL the URL parser refuses (port out of range, space in the host, IPv6 zone id)', async () => {
    for (const field of ['base_url', 'public_url'] as const) {
      for (const url of ['http://127.0.0.1:99999/', 'http://agent host/', 'http://[fe80::1%25eth0]:8001/']) {
        const id = uniqueNodeId('unparsable');
        const response = await call(
          cp.base,
          'POST',
          '/api/v1/nodes/register',
          registration(id, agent.url, { [field]: url }),
        );
        expectProblem(response, 400, 'invalid_request');
        expect(response.body.errors).toEqual([{ field, message: expect.any(String) }]);
      }
    }
    expect(cp.errors).toEqual([]);
  });

  it('refuses "." and ".." path segments, which the URL API would resolve to another path than the one shown', async () => {
    for (const url of [
      `${agent.url}/agents/../admin`,
      `${agent.url}/agents/%2e%2E/admin`,
      `${agent.url}/agents/.`,
      `${agent.url}/./agents`,
    ]) {
      const id = uniqueNodeId('dotted');
      const response = await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, url));
      expectProblem(response, 400, 'invalid_request');
      expect(response.body.errors).toEqual([
        {
          field: 'base_url',
          message: 'use an origin and an optional path only: no "." or ".." path segments',
        },
      ]);
    }
    // Dots inside a segment are ordinary characters.
    for (const path of ['/.well-known/agent', '/v1..2', '/...']) {
      const response = await call(
        cp.base,
        'POST',
        '/api/v1/nodes/register',
        registration(uniqueNodeId('dots'), `${agent.url}${path}`),
      );
      expect(response.status).toBe(201);
      expect(response.body.base_url).toBe(`${agent.url}${path}`);
    }
  });

  it('keeps the base path: probes GET {base path}/health and posts the shutdown notice under it', async () => {
    const id = uniqueNodeId('pathed');
    await register(id, { base_url: `${agent.url}/agents/a1/` });
    const before = agent.requests.length;
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/status/refresh`);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/shutdown`);
    expect(agent.requests.slice(before)).toEqual([
      'GET /agents/a1/health',
      'POST /agents/a1/_internal/shutdown',
    ]);
  });

  it('calls an instance stored before the check without its query, fragment or credentials', async () => {
    const id = uniqueNodeId('legacyurl');
    await register(id);
    const { host } = new URL(agent.url);
    await cp.handle
      .db('node_instances')
      .where({ node_id: id })
      .update({ base_url: `http://agent:s3cret@${host}/internal/admin?x=1#frag` });
    const before = agent.requests.length;
    const refreshed = await call(cp.base, 'POST', `/api/v1/nodes/${id}/status/refresh`);
    expect(refreshed.body.health.last_check_ok).toBe(true);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/shutdown`);
    expect(agent.requests.slice(before)).toEqual([
      'GET /internal/admin/health',
      'POST /internal/admin/_internal/shutdown',
    ]);
  });

  it('agentUrl encodes each segment and refuses dot segments that would leave the base path', () => {
    expect(agentUrl('http://127.0.0.1:8001', 'health')).toBe('http://127.0.0.1:8001/health');
    expect(agentUrl('https://agents.example/a1//', 'reasoners', 'sum marize')).toBe(
      'https://agents.example/a1/reasoners/sum%20marize',
    );
    expect(agentUrl('http://h/a', '_internal', 'executions', 'x/../y', 'cancel')).toBe(
      'http://h/a/_internal/executions/x%2F..%2Fy/cancel',
    );
    for (const segment of ['..', '.', '%2e%2E', '']) {
      expect(() => agentUrl('http://h/a', segment)).toThrow(RangeError);
    }
  });
});

describe('"__proto__" keys are kept like any other key', () => {
  // Bodies are sent as JSON text: a JavaScript object literal cannot even hold such a key.
  const text = (value: Record<string, unknown>, protoJson: string, where: string) =>
    JSON.stringify(value).replace(`"${where}":{`, `"${where}":{"__proto__":${protoJson},`);

  it('keeps "__proto__" in metadata, custom health and function schemas, stored and answered', async () => {
    const id = uniqueNodeId('proto');
    const body = text(
      registration(id, agent.url, { metadata: { team: 'qa' } }),
      '{"role":"admin"}',
      'metadata',
    ).replace('"output_schema":{', '"output_schema":{"__proto__":{"type":"string"},');
    const registered = await call(cp.base, 'POST', '/api/v1/nodes/register', body);
    expect(registered.status).toBe(201);
    for (const record of [registered.body, (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body]) {
      // jsonb orders keys its own way (shorter first), so compare them sorted.
      expect(Object.keys(record.metadata).sort()).toEqual(['__proto__', 'team']);
      expect(Object.getOwnPropertyDescriptor(record.metadata, '__proto__')?.value).toEqual({ role: 'admin' });
      expect(Object.hasOwn(record.reasoners[0].output_schema, '__proto__')).toBe(true);
    }
    const patched = await call(
      cp.base,
      'PATCH',
      `/api/v1/nodes/${id}/status`,
      '{"state":"ready","health":{"__proto__":7,"queue":1}}',
    );
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.body.health.custom).sort()).toEqual(['__proto__', 'queue']);
  });

  it('checks the keys and values under "__proto__" like the rest (400 naming the field)', async () => {
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      text(registration(uniqueNodeId(), agent.url), '{"bad\\u0000":1}', 'metadata'),
    );
    expectProblem(response, 400, 'invalid_request');
    expect(response.body.errors).toEqual([
      { field: 'metadata.__proto__["bad\\u0000"]', message: expect.stringMatching(/NUL/) },
    ]);
  });

  it('answers every requested id in POST /api/v1/nodes/status/bulk, "__proto__" and "constructor" included', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', '/api/v1/nodes/status/bulk', {
      node_ids: ['__proto__', 'constructor', id],
    });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['__proto__', 'constructor', id]);
    const notFound = { status: null, version: null, last_heartbeat: null, error: 'not_found' };
    expect(Object.getOwnPropertyDescriptor(response.body, '__proto__')?.value).toEqual(notFound);
    expect(response.body.constructor).toEqual(notFound);
    expect(response.body[id]).toMatchObject({ status: 'starting' });
  });
});

describe('proposed_tags and accepts_webhook from the SDKs are kept', () => {
  it('stores the agent proposed_tags and accepts_webhook and each function proposed_tags, and shows them', async () => {
    const id = uniqueNodeId('sdk');
    const registered = await register(id, {
      proposed_tags: ['finance', 'pii'],
      accepts_webhook: true,
      reasoners: [{ id: 'summarize', tags: ['nlp'], proposed_tags: ['gpt'], accepts_webhook: true }],
      skills: [{ id: 'word_count', tags: [], proposed_tags: [] }],
    });
    for (const record of [registered, (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body]) {
      expect(record).toMatchObject({ proposed_tags: ['finance', 'pii'], accepts_webhook: 'true' });
      expect(record.reasoners).toEqual([
        { id: 'summarize', tags: ['nlp'], proposed_tags: ['gpt'], accepts_webhook: 'true' },
      ]);
      expect(record.skills).toEqual([{ id: 'word_count', tags: [], proposed_tags: [] }]);
      expect(record.instances?.[0] ?? record).toMatchObject({ proposed_tags: ['finance', 'pii'] });
    }
  });

  it('takes accepts_webhook as the strings the SDKs send ("true", "false", "warn") or a boolean, and stores the string', async () => {
    const id = uniqueNodeId('sdk');
    const sent = [true, false, 'true', 'false', 'warn'];
    const registered = await register(id, {
      accepts_webhook: 'warn',
      reasoners: sent.map((flag, i) => ({ id: `r${i}`, accepts_webhook: flag })),
      skills: [{ id: 's', accepts_webhook: false }],
    });
    const stored = ['true', 'false', 'true', 'false', 'warn'];
    for (const record of [registered, (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body]) {
      expect(record.accepts_webhook).toBe('warn');
      expect(record.reasoners.map((r: any) => r.accepts_webhook)).toEqual(stored);
      expect(record.skills[0].accepts_webhook).toBe('false');
    }
    const summary = await call(cp.base, 'GET', `/api/ui/v1/nodes?node_id=${id}`);
    const listed = summary.body.nodes[0];
    expect(JSON.stringify(listed)).toContain('"accepts_webhook":"warn"');
  });

  it('defaults to no proposed tags and no webhooks, and answers 400 for wrong types', async () => {
    const id = uniqueNodeId('sdk');
    expect(await register(id, { proposed_tags: null, accepts_webhook: null })).toMatchObject({
      proposed_tags: [],
      accepts_webhook: 'false',
    });
    const wrong = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), agent.url, {
        proposed_tags: 'finance',
        accepts_webhook: 'yes',
        reasoners: [{ id: 'r', accepts_webhook: 'TRUE' }],
        skills: [{ id: 's', proposed_tags: [1], accepts_webhook: 1 }],
      }),
    );
    expectProblem(wrong, 400, 'invalid_request');
    expect(wrong.body.errors.map((e: any) => e.field).sort()).toEqual([
      'accepts_webhook',
      'proposed_tags',
      'reasoners[0].accepts_webhook',
      'skills[0].accepts_webhook',
      'skills[0].proposed_tags[0]',
    ]);
  });
});

describe('POST /api/v1/nodes/{id}/heartbeat', () => {
  it('answers 2xx right after registration and records the heartbeat', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {
      status: 'starting',
      version: '1.0.0',
      timestamp: new Date().toISOString(),
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      node_id: id,
      version: '1.0.0',
      status: 'starting',
      heartbeat_ttl_seconds: 15,
    });
    expect(response.body.last_heartbeat).toBe(new Date(cp.clock.now()).toISOString());
    // No rhythm observed yet: the lease lasts 3 × the assumed 30 s interval (see presence tests).
    expect(response.body).toMatchObject({ lease_ttl_seconds: 90, observed_heartbeat_interval_seconds: null });
    expect(response.body.lease_expires_at).toBe(new Date(cp.clock.now() + 90_000).toISOString());
  });

  it('turns a starting node ready when the heartbeat says ready', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {
      status: 'ready',
      version: '1.0.0',
    });
    expect(response.body.status).toBe('ready');
    expect(seen).toContainEqual(
      expect.objectContaining({
        type: 'node.status_changed',
        node_id: id,
        old_status: 'starting',
        new_status: 'ready',
      }),
    );
  });

  it('accepts an empty body, no body and an empty version, counting them as ready', async () => {
    const id = uniqueNodeId();
    await register(id, { version: '' });
    expect((await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`)).status).toBe(200);
    expect((await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {})).body.status).toBe('ready');
    expect((await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { version: '' })).status).toBe(200);
  });

  it('applies an empty version to the instance registered with an empty version (0.0.0), not the newest', async () => {
    const id = uniqueNodeId();
    await register(id, { version: '' });
    cp.clock.advance(1);
    await register(id, { version: '2.0.0' });
    const heartbeat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {
      status: 'ready',
      version: '',
    });
    expect(heartbeat.status).toBe(200);
    expect(heartbeat.body.version).toBe('0.0.0');
    const patch = await call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, { state: 'ready', version: '' });
    expect(patch.body.version).toBe('0.0.0');
    const report = await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, {
      status: 'degraded',
      version: '',
    });
    expect(report.body.version).toBe('0.0.0');
    const stop = await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`, { version: '' });
    expect(stop.status).toBe(200);
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    const byVersion = Object.fromEntries(node.body.instances.map((i: any) => [i.version, i]));
    expect(byVersion['0.0.0'].admin_state).toBe('stopped');
    expect(byVersion['2.0.0'].admin_state).toBe('active');
    expect(byVersion['2.0.0'].last_heartbeat).toBeNull();
  });

  it('answers 404 for an empty version when no instance was registered without a version', async () => {
    const id = uniqueNodeId();
    await register(id, { version: '1.0.0' });
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { version: '' });
    expectProblem(response, 404, 'not_found');
  });

  it('applies a heartbeat without version to the most recently registered instance', async () => {
    const id = uniqueNodeId();
    await register(id, { version: '1.0.0' });
    cp.clock.advance(1);
    await register(id, { version: '2.0.0' });
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(response.body.version).toBe('2.0.0');
  });

  it('answers 404 not_found for an unknown node so the SDK registers again', async () => {
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${uniqueNodeId('ghost')}/heartbeat`, {
      status: 'ready',
    });
    expectProblem(response, 404, 'not_found');
    expect(response.body.detail).toMatch(/register/i);
  });

  it('answers 404 not_found for a version the node never registered', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { version: '9.9.9' });
    expectProblem(response, 404, 'not_found');
    expect(response.body.detail).toContain('9.9.9');
  });

  it('answers 400 for an unknown status, a wrong type and malformed JSON', async () => {
    const id = uniqueNodeId();
    await register(id);
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'sleeping' }),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { version: 7 }),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, '[1,'),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, '"ready"'),
      400,
      'invalid_request',
    );
  });

  it('answers 413 for a heartbeat over 64 KiB', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {
      pad: 'x'.repeat(70 * 1024),
    });
    expectProblem(response, 413, 'payload_too_large');
  });
});

describe('PATCH /api/v1/nodes/{id}/status', () => {
  it('records a heartbeat, the state and custom health data', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, {
      state: 'ready',
      version: '1.0.0',
      health: { queue: 3, mcp_servers: [{ name: 'fs', ok: true }] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ node_id: id, status: 'ready', version: '1.0.0' });
    expect(response.body.last_heartbeat).toMatch(ISO);
    expect(response.body.health.custom).toEqual({ queue: 3, mcp_servers: [{ name: 'fs', ok: true }] });
    expect(seen).toContainEqual(expect.objectContaining({ type: 'node.updated', node_id: id }));
  });

  it('announces node.updated only when the custom health changed, not on every PATCH', async () => {
    const id = uniqueNodeId();
    await register(id);
    const updates = () => seen.filter((e) => e.type === 'node.updated' && e.node_id === id).length;
    const patch = (health: Record<string, unknown>) =>
      call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, { state: 'ready', health });
    expect((await patch({ queue: 1 })).status).toBe(200);
    expect(updates()).toBe(1);
    expect((await patch({ queue: 1 })).body.health.custom).toEqual({ queue: 1 });
    expect((await patch({ queue: 1 })).status).toBe(200);
    expect(updates()).toBe(1);
    await patch({ queue: 2 });
    expect(updates()).toBe(2);
  });

  it('answers 400 when status and state disagree, 404 for an unknown node', async () => {
    const id = uniqueNodeId();
    await register(id);
    expectProblem(
      await call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, { status: 'ready', state: 'offline' }),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, { health: [1, 2] }),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'PATCH', `/api/v1/nodes/${uniqueNodeId('ghost')}/status`, {}),
      404,
      'not_found',
    );
  });
});

describe('POST /api/v1/nodes/{id}/lifecycle/status', () => {
  it('moves a starting node to ready when the agent reports it', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, { status: 'ready' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      lifecycle_status: 'ready',
      status_reason: 'agent_reported',
      routable: true,
    });
  });

  it('lets the agent report itself degraded and back', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, { status: 'ready' });
    const degraded = await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, {
      status: 'degraded',
    });
    expect(degraded.body.lifecycle_status).toBe('degraded');
    const ready = await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, { status: 'ready' });
    expect(ready.body.lifecycle_status).toBe('ready');
  });

  it('answers 400 without a status and 404 for an unknown node', async () => {
    const id = uniqueNodeId();
    await register(id);
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, {}),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`),
      400,
      'invalid_request',
    );
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${uniqueNodeId('ghost')}/lifecycle/status`, {
        status: 'ready',
      }),
      404,
      'not_found',
    );
  });
});

describe('GET /api/v1/nodes/{id}', () => {
  it('answers the node with lifecycle_status for SDKs that poll it', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const response = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, lifecycle_status: 'ready', version: '1.0.0' });
    expect(response.body.instances).toHaveLength(1);
  });

  it('answers 404 not_found for an unknown node, including URL-encoded hostile ids', async () => {
    expectProblem(await call(cp.base, 'GET', `/api/v1/nodes/${uniqueNodeId('ghost')}`), 404, 'not_found');
    expectProblem(
      await call(cp.base, 'GET', `/api/v1/nodes/${encodeURIComponent("x' or 1=1 --")}`),
      404,
      'not_found',
    );
  });
});

describe('GET /api/v1/nodes/{id}/status', () => {
  it('answers status, version, last heartbeat and health results per instance', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const response = await call(cp.base, 'GET', `/api/v1/nodes/${id}/status`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ node_id: id, status: 'ready', version: '1.0.0', routable: true });
    expect(response.body.last_heartbeat).toMatch(ISO);
    // Never probed before, so the status read probed the agent (a real HTTP server) now.
    expect(response.body.health).toMatchObject({
      last_check_ok: true,
      last_check_status_code: 200,
      consecutive_failures: 0,
    });
    expect(response.body.instances[0]).toMatchObject({
      version: '1.0.0',
      status: 'ready',
      admin_state: 'active',
    });
  });

  it('serves cached health results within the status cache TTL and probes again after it', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'GET', `/api/v1/nodes/${id}/status`);
    const probes = agent.healthRequests;
    await call(cp.base, 'GET', `/api/v1/nodes/${id}/status`);
    expect(agent.healthRequests).toBe(probes);
    cp.clock.advance(300_001);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {});
    await call(cp.base, 'GET', `/api/v1/nodes/${id}/status`);
    expect(agent.healthRequests).toBe(probes + 1);
  });

  it('answers 404 for an unknown node', async () => {
    expectProblem(
      await call(cp.base, 'GET', `/api/v1/nodes/${uniqueNodeId('ghost')}/status`),
      404,
      'not_found',
    );
  });
});

describe('POST /api/v1/nodes/{id}/status/refresh', () => {
  it('probes the node now, bypassing the status cache', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'GET', `/api/v1/nodes/${id}/status`);
    const probes = agent.healthRequests;
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/status/refresh`);
    expect(response.status).toBe(200);
    expect(agent.healthRequests).toBe(probes + 1);
    expect(response.body.node_id).toBe(id);
  });

  it('answers 404 for an unknown node and 400 for a body that is not an object', async () => {
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${uniqueNodeId('ghost')}/status/refresh`),
      404,
      'not_found',
    );
    const id = uniqueNodeId();
    await register(id);
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/status/refresh`, '[]'),
      400,
      'invalid_request',
    );
  });
});

describe('POST /api/v1/nodes/status/bulk', () => {
  it('answers an object keyed by node id, marking unknown ids not_found', async () => {
    const a = uniqueNodeId();
    const b = uniqueNodeId();
    await register(a);
    await register(b);
    await call(cp.base, 'POST', `/api/v1/nodes/${a}/heartbeat`, { status: 'ready' });
    const ghost = uniqueNodeId('ghost');
    const response = await call(cp.base, 'POST', '/api/v1/nodes/status/bulk', { node_ids: [a, b, ghost] });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual([a, b, ghost].sort());
    expect(response.body[a]).toMatchObject({ status: 'ready', version: '1.0.0' });
    expect(response.body[a].last_heartbeat).toMatch(ISO);
    expect(response.body[b]).toMatchObject({ status: 'starting', last_heartbeat: null });
    expect(response.body[ghost]).toEqual({
      status: null,
      version: null,
      last_heartbeat: null,
      error: 'not_found',
    });
  });

  it('answers 400 for a missing, empty, mistyped or oversized node_ids list', async () => {
    for (const body of [
      {},
      { node_ids: [] },
      { node_ids: 'a' },
      { node_ids: [1] },
      { node_ids: Array(1001).fill('a') },
    ]) {
      expectProblem(await call(cp.base, 'POST', '/api/v1/nodes/status/bulk', body), 400, 'invalid_request');
    }
  });

  it('answers 413 for a body over 512 KiB', async () => {
    const response = await call(cp.base, 'POST', '/api/v1/nodes/status/bulk', {
      node_ids: ['a'],
      pad: 'x'.repeat(600 * 1024),
    });
    expectProblem(response, 413, 'payload_too_large');
  });
});

describe('POST /api/v1/nodes/status/refresh', () => {
  it('reconciles the whole fleet and reports what changed', async () => {
    const id = uniqueNodeId();
    await register(id);
    const response = await call(cp.base, 'POST', '/api/v1/nodes/status/refresh');
    expect(response.status).toBe(200);
    expect(response.body.reconciled_at).toMatch(ISO);
    expect(response.body.checked).toBeGreaterThan(0);
    expect(response.body.nodes[id]).toMatchObject({ status: 'starting' });
    expect(Array.isArray(response.body.expired)).toBe(true);
  });
});

describe('POST /api/v1/nodes/{id}/stop and /start', () => {
  it('stop takes the node out of routing as offline (stopped), and heartbeats do not bring it back', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const stopped = await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ node_id: id, action: 'stop' });
    expect(stopped.body.instances[0]).toMatchObject({
      lifecycle_status: 'offline',
      status_reason: 'stopped',
      admin_state: 'stopped',
      routable: false,
    });
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(beat.body.status).toBe('offline');
    // A stop survives re-registration too: the operator's decision holds until start.
    await register(id);
    expect((await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body.lifecycle_status).toBe('offline');
    expect(await cp.runtime.nodes.pickInstance(id)).toBeUndefined();
  });

  it('start puts a stopped node back to starting, and the next heartbeat makes it ready', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`);
    const started = await call(cp.base, 'POST', `/api/v1/nodes/${id}/start`, {});
    expect(started.body.instances[0]).toMatchObject({
      lifecycle_status: 'starting',
      status_reason: 'started',
      admin_state: 'active',
    });
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(beat.body.status).toBe('ready');
  });

  it('start makes a started node ready on its first healthy probe', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/start`);
    const refreshed = await call(cp.base, 'POST', `/api/v1/nodes/${id}/status/refresh`);
    expect(refreshed.body.instances[0]).toMatchObject({
      status: 'ready',
      status_reason: 'health_check_passed',
    });
  });

  it('start on an active node changes nothing', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const started = await call(cp.base, 'POST', `/api/v1/nodes/${id}/start`);
    expect(started.body.instances[0].lifecycle_status).toBe('ready');
  });

  it('limits the action to one version when asked', async () => {
    const id = uniqueNodeId();
    await register(id, { version: '1.0.0' });
    await register(id, { version: '2.0.0' });
    const stopped = await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`, { version: '2.0.0' });
    expect(stopped.body.instances).toHaveLength(1);
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    const byVersion = Object.fromEntries(node.body.instances.map((i: any) => [i.version, i.admin_state]));
    expect(byVersion).toEqual({ '1.0.0': 'active', '2.0.0': 'stopped' });
  });

  it('answers 404 for an unknown node or version, 400 for bad bodies', async () => {
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${uniqueNodeId('ghost')}/stop`),
      404,
      'not_found',
    );
    const id = uniqueNodeId();
    await register(id);
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/start`, { version: '7.7.7' }),
      404,
      'not_found',
    );
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`, { version: 3 }),
      400,
      'invalid_request',
    );
    expectProblem(await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`, '{oops'), 400, 'invalid_request');
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`, { reason: 'x'.repeat(20 * 1024) }),
      413,
      'payload_too_large',
    );
  });
});

describe('POST /api/v1/nodes/{id}/shutdown', () => {
  it('stops routing, notifies the agent, marks it offline and releases the lease', async () => {
    const id = uniqueNodeId();
    await register(id);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/shutdown`, { reason: 'maintenance' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ node_id: id, action: 'shutdown' });
    expect(response.body.instances[0]).toMatchObject({
      version: '1.0.0',
      drained: true,
      active_executions: 0,
      notified: true,
      notify_error: null,
      lifecycle_status: 'offline',
      status_reason: 'shutdown',
      admin_state: 'shutdown',
      lease_expires_at: null,
    });
    expect(agent.shutdownNotices).toContainEqual({ node_id: id, version: '1.0.0', reason: 'maintenance' });
    // Heartbeats of a shut-down agent do not bring it back; registering again does.
    expect(
      (await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' })).body.status,
    ).toBe('offline');
    expect((await register(id)).lifecycle_status).toBe('starting');
  });

  it('accepts the body the TypeScript SDK sends when it shuts itself down', async () => {
    const id = uniqueNodeId();
    // An SDK without a configured version registers and shuts down with `version: ''`.
    await register(id, { version: '' });
    const response = await call(cp.base, 'POST', `/api/v1/nodes/${id}/shutdown`, {
      reason: 'shutdown',
      version: '',
    });
    expect(response.status).toBe(200);
    expect(response.body.instances[0].lifecycle_status).toBe('offline');
  });

  it('skips the notification when notify is false and reports an unreachable agent', async () => {
    const id = uniqueNodeId();
    await register(id);
    const before = agent.shutdownNotices.length;
    const quiet = await call(cp.base, 'POST', `/api/v1/nodes/${id}/shutdown`, { notify: false });
    expect(quiet.body.instances[0]).toMatchObject({ notified: false, notify_error: null });
    expect(agent.shutdownNotices).toHaveLength(before);

    const gone = uniqueNodeId();
    await call(cp.base, 'POST', '/api/v1/nodes/register', registration(gone, 'http://127.0.0.1:9'));
    const unreachable = await call(cp.base, 'POST', `/api/v1/nodes/${gone}/shutdown`);
    expect(unreachable.status).toBe(200);
    expect(unreachable.body.instances[0]).toMatchObject({ notified: false, lifecycle_status: 'offline' });
    expect(unreachable.body.instances[0].notify_error).toEqual(expect.any(String));
  });

  it('answers 404 for an unknown node and 400 for a negative drain timeout', async () => {
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${uniqueNodeId('ghost')}/shutdown`),
      404,
      'not_found',
    );
    const id = uniqueNodeId();
    await register(id);
    expectProblem(
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/shutdown`, { drain_timeout_ms: -1 }),
      400,
      'invalid_request',
    );
  });
});

describe('GET /api/ui/v1/nodes', () => {
  it('lists nodes with their instances and filters by status, tag and id', async () => {
    const id = uniqueNodeId('listed');
    await register(id, { tags: ['blue'] });
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const all = await call(cp.base, 'GET', '/api/ui/v1/nodes');
    expect(all.status).toBe(200);
    expect(all.body.total).toBeGreaterThanOrEqual(all.body.nodes.length);
    expect((await call(cp.base, 'GET', `/api/ui/v1/nodes?node_id=${id}`)).body.nodes[0].id).toBe(id);
    const blue = await call(cp.base, 'GET', '/api/ui/v1/nodes?tag=blue');
    expect(blue.body.nodes.map((n: any) => n.id)).toEqual([id]);
    const ready = await call(cp.base, 'GET', `/api/ui/v1/nodes?status=ready&node_id=${id}`);
    expect(ready.body.nodes).toHaveLength(1);
    const offline = await call(cp.base, 'GET', `/api/ui/v1/nodes?status=offline&node_id=${id}`);
    expect(offline.body.nodes).toHaveLength(0);
  });

  it('answers 400 for an unknown status filter or a repeated parameter', async () => {
    expectProblem(await call(cp.base, 'GET', '/api/ui/v1/nodes?status=asleep'), 400, 'invalid_request');
    expectProblem(await call(cp.base, 'GET', '/api/ui/v1/nodes?tag=a&tag=b'), 400, 'invalid_request');
  });
});

describe('GET /api/ui/v1/nodes is paginated and its answers are bounded', () => {
  // A database of its own, so counts and pages hold only what these tests register.
  let fleet: TestControlPlane;
  const list = async (query = '') => call(fleet.base, 'GET', `/api/ui/v1/nodes${query}`);
  const enroll = async (id: string, overrides: Record<string, unknown> = {}) => {
    const response = await call(
      fleet.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, agent.url, overrides),
    );
    expect(response.status).toBe(201);
  };
  // About 650 KB of schemas per registration: 40 functions sharing one 16 KB schema (so ajv
  // compiles it once), the shape of a fleet of 30 nodes x 2,000 functions at a test's scale.
  const bulky = {
    reasoners: Array.from({ length: 40 }, (_, i) => ({
      id: `fn_${i}`,
      description: `function ${i}`,
      input_schema: { type: 'object', description: 'x'.repeat(16_000) },
      output_schema: { type: 'object' },
      examples: [{ text: 'hello' }],
      memory_config: { scope: 'workflow' },
      tags: ['bulk'],
    })),
    skills: [],
  };

  beforeAll(async () => {
    fleet = await startTestControlPlane();
    for (const letter of 'abcde') await enroll(`page-${letter}`);
    for (let i = 0; i < 12; i++) await enroll(`bulk-${String(i).padStart(2, '0')}`, bulky);
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('pages nodes in node id order with limit and offset, and says where the next page starts', async () => {
    const first = await list('?limit=2&tag=test&node_id=page-a');
    expect(first.body).toMatchObject({
      total: 1,
      pagination: { limit: 2, offset: 0, has_more: false, next_offset: null },
    });
    const seen: string[] = [];
    let query = '?limit=2&tag=test';
    for (let pages = 0; pages < 10; pages++) {
      const page = await list(query);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(17);
      expect(page.body.nodes.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.nodes.map((n: any) => n.node_id));
      if (page.body.pagination.next_offset === null) break;
      expect(page.body.pagination).toMatchObject({ limit: 2, has_more: true });
      query = `?limit=2&tag=test&offset=${page.body.pagination.next_offset}`;
    }
    expect(seen.slice(0, 5)).toEqual(['bulk-00', 'bulk-01', 'bulk-02', 'bulk-03', 'bulk-04']);
    expect(seen).toHaveLength(17);
    expect(new Set(seen).size).toBe(17);
    const defaults = await list();
    expect(defaults.body.pagination).toEqual({ limit: 50, offset: 0, has_more: false, next_offset: null });
    expect((await list('?offset=17')).body).toMatchObject({ nodes: [], total: 17 });
  });

  it('leaves function schemas, examples and memory_config out unless include_schemas=true', async () => {
    const summary = (await list('?node_id=bulk-00')).body.nodes[0];
    for (const fn of [...summary.reasoners, ...summary.instances[0].reasoners]) {
      expect(Object.keys(fn).sort()).toEqual(['description', 'id', 'tags']);
    }
    const full = (await list('?node_id=bulk-00&include_schemas=true')).body.nodes[0];
    expect(full.reasoners[0]).toEqual(bulky.reasoners[0]);
  });

  it('answers 400 naming the parameter for a bad limit, offset or include_schemas, and for a repeated one', async () => {
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=ten', 'limit'],
      ['?offset=-1', 'offset'],
      ['?offset=1000001', 'offset'],
      ['?include_schemas=maybe', 'include_schemas'],
      ['?limit=1&limit=2', 'limit'],
    ]) {
      const response = await list(query);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('invalid_request');
      expect(response.body.errors.map((e: any) => e.field)).toEqual([field]);
    }
  });

  it('bounds every answer by bytes and keeps /api/v1/health answering during a burst of large lists', async () => {
    const burst = [
      ...Array.from({ length: 6 }, () => list('?limit=200&include_schemas=true')),
      ...Array.from({ length: 6 }, () => list('?limit=200')),
    ];
    const health = await call(fleet.base, 'GET', '/api/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('healthy');
    const answers = await Promise.all(burst);
    for (const answer of answers.slice(0, 6)) {
      const size = Buffer.byteLength(JSON.stringify(answer.body.nodes));
      expect(size).toBeLessThanOrEqual(LIST_ANSWER_BYTES);
      // 17 nodes and about 8 MB in all: the 4 MiB bound ends the page early.
      expect(answer.body.nodes.length).toBeLessThan(17);
      expect(answer.body.pagination).toMatchObject({
        has_more: true,
        next_offset: answer.body.nodes.length,
      });
    }
    for (const answer of answers.slice(6)) {
      expect(answer.body.nodes).toHaveLength(17);
      expect(JSON.stringify(answer.body)).not.toContain('input_schema');
      expect(Buffer.byteLength(JSON.stringify(answer.body))).toBeLessThan(256 * 1024);
    }
    // Following next_offset still reaches every node.
    const ids: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page: any = await list(`?limit=200&include_schemas=true&offset=${offset}`);
      ids.push(...page.body.nodes.map((n: any) => n.node_id));
      offset = page.body.pagination.next_offset;
    }
    expect(ids).toHaveLength(17);
  });

  it('sends a node larger than the bound on its own page', async () => {
    for (const version of ['1', '2', '3', '4', '5', '6', '7']) {
      await enroll('zz-giant', { ...bulky, version });
    }
    const page = await list('?node_id=zz-giant&include_schemas=true');
    expect(page.body.nodes).toHaveLength(1);
    expect(page.body.nodes[0].instances).toHaveLength(7);
    expect(Buffer.byteLength(JSON.stringify(page.body.nodes))).toBeGreaterThan(LIST_ANSWER_BYTES);
    expect(page.body.pagination.has_more).toBe(false);
  });
});

describe('groupByNode (bulk status, fleet refresh and the UI list)', () => {
  it('groups instances by node id in first-seen order, keeping each group in the given order', () => {
    const row = (nodeId: string, version: string) => ({ nodeId, version }) as NodeInstanceRecord;
    const rows = [row('a', '1'), row('b', '1'), row('a', '2'), row('c', '1'), row('b', '2'), row('a', '3')];
    const grouped = groupByNode(rows);
    expect([...grouped.keys()]).toEqual(['a', 'b', 'c']);
    expect(grouped.get('a')!.map((r) => r.version)).toEqual(['1', '2', '3']);
    expect(grouped.get('b')![1]).toBe(rows[4]);
    expect(groupByNode([]).size).toBe(0);
  });

  it('answers every instance of every node in the UI list and the fleet refresh', async () => {
    const id = uniqueNodeId('grouped');
    for (const version of ['1.0.0', '2.0.0', '3.0.0']) await register(id, { version });
    const list = await call(cp.base, 'GET', `/api/ui/v1/nodes?node_id=${id}`);
    expect(list.body.total).toBe(1);
    expect(list.body.nodes[0].instances.map((i: any) => i.version).sort()).toEqual([
      '1.0.0',
      '2.0.0',
      '3.0.0',
    ]);
    const refresh = await call(cp.base, 'POST', '/api/v1/nodes/status/refresh');
    expect(refresh.body.nodes[id].instances).toHaveLength(3);
  });
});

describe('routes and methods', () => {
  it('answers 405 with Allow for a wrong method on a node path', async () => {
    const response = await call(cp.base, 'DELETE', '/api/v1/nodes/some-node/heartbeat');
    expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('lists the node endpoints in available_endpoints', async () => {
    const response = await call(cp.base, 'GET', '/api/v1/nodez');
    expectProblem(response, 404, 'not_found');
    expect(response.body.available_endpoints['/api/v1/nodes/:id/heartbeat']).toEqual(['POST']);
  });
});

describe('shutdown drain', () => {
  it('waits for active executions to drain before notifying and marking offline', async () => {
    const counts = [2, 1, 0];
    const asked: string[] = [];
    const local = await startTestControlPlane({
      handle: cp.handle,
      drainPollMs: 5,
      countActiveExecutions: async (nodeId, version) => {
        asked.push(`${nodeId}@${version}`);
        return counts.shift() ?? 0;
      },
    });
    try {
      const id = uniqueNodeId('drain');
      await call(local.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
      const response = await call(local.base, 'POST', `/api/v1/nodes/${id}/shutdown`);
      expect(response.body.instances[0]).toMatchObject({
        drained: true,
        active_executions: 0,
        notified: true,
      });
      expect(asked).toEqual([`${id}@1.0.0`, `${id}@1.0.0`, `${id}@1.0.0`]);
    } finally {
      await local.close();
    }
  });

  it('gives up waiting at the drain timeout and still shuts the node down', async () => {
    const local = await startTestControlPlane({
      handle: cp.handle,
      drainPollMs: 5,
      countActiveExecutions: async () => 4,
    });
    try {
      const id = uniqueNodeId('stuck');
      await call(local.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
      const response = await call(local.base, 'POST', `/api/v1/nodes/${id}/shutdown`, {
        drain_timeout_ms: 30,
      });
      expect(response.body.instances[0]).toMatchObject({
        drained: false,
        active_executions: 4,
        lifecycle_status: 'offline',
        lease_expires_at: null,
      });
    } finally {
      await local.close();
    }
  });
});

describe('content/reference/limits.md', () => {
  it('gives the default traffic weight a registration gets and the largest weight the API takes', async () => {
    const page = readFileSync(new URL('../../../content/reference/limits.md', import.meta.url), 'utf8');
    const row = /^\| Default traffic weight \/ weight range \| ([\d ]+) \/ 0 to ([\d ]+) \|/m.exec(page);
    expect(row, 'the traffic weight row of limits.md').not.toBeNull();
    const [fallback, largest] = [row![1]!, row![2]!].map((text) => Number(text.replace(/ /g, '')));
    expect(largest).toBe(MAX_TRAFFIC_WEIGHT);
    expect((await register(uniqueNodeId('weight'))).traffic_weight).toBe(fallback);
  });
});
