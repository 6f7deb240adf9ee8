import { isProblem } from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONNECTOR_CAPABILITIES,
  CONNECTOR_PREFIXES,
  type ConnectorCapability,
} from '../src/modules/connector/index.ts';
import { NODES_TOPIC } from '../src/modules/nodes/index.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';

/*
 * The connector API (/connector/* and /api/v1/connector/*): its token, capabilities, records and
 * weight validation. Routing by weight with real agents is in connector-routing.test.ts, restarts
 * in connector-restart.test.ts.
 */

const TOKEN = 'connector-test-token-5f2a';
const API_KEY = 'connector-test-api-key';
const BEARER = { Authorization: `Bearer ${TOKEN}` };

type Answer = { status: number; headers: globalThis.Headers; body: any };
type Headers = Record<string, string>;

/**
 * A control plane with the connector on (all capabilities unless given) and an API key set. Those
 * started after the first share its database (another replica, with its own settings).
 */
async function controlPlane(
  connector: { token?: string; capabilities?: ConnectorCapability[] } = {},
): Promise<TestControlPlane> {
  return startTestControlPlane({
    handle: cp?.handle,
    config: (config) => {
      config.api.auth = { apiKey: API_KEY, skipPaths: [] };
      config.connector.token = 'token' in connector ? connector.token : TOKEN;
      config.connector.capabilities = connector.capabilities ?? [...CONNECTOR_CAPABILITIES];
    },
  });
}

function expectProblem(response: Answer, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(isProblem(response.body)).toBe(true);
  expect(response.body.code).toBe(code);
}

let cp: TestControlPlane;
const nodeId = uniqueNodeId('conn');
const other = uniqueNodeId('conn-other');

/** Registers an instance (no agent needed for reads) and reports it ready. */
async function registerReady(
  target: TestControlPlane,
  id: string,
  version: string,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const key = { 'X-API-Key': API_KEY };
  const body = registration(id, 'http://127.0.0.1:9', { version, ...overrides });
  const registered = await call(target.base, 'POST', '/api/v1/nodes/register', body, key);
  expect([200, 201]).toContain(registered.status);
  const ready = await call(
    target.base,
    'POST',
    `/api/v1/nodes/${id}/heartbeat`,
    { version, status: 'ready' },
    key,
  );
  expect(ready.status).toBe(200);
}

beforeAll(async () => {
  cp = await controlPlane();
  await registerReady(cp, nodeId, '1.0.0');
  // Registered later: its description of a function shared with 1.0.0 is the one shown.
  cp.clock.advance(1000);
  await registerReady(cp, nodeId, '1.1.0', {
    reasoners: [
      {
        id: 'summarize',
        description: 'Summarises text, v2',
        input_schema: { type: 'object' },
        tags: ['nlp'],
      },
      { id: 'translate', tags: [] },
    ],
  });
  await registerReady(cp, other, '0.1.0', { reasoners: [], skills: [{ id: 'ping', tags: ['util'] }] });
});

afterAll(async () => {
  await cp?.close();
});

/** One request per connector endpoint, with paths that exist in the fleet above. */
function endpoints(prefix: string): Array<{
  method: string;
  path: string;
  body?: unknown;
  capability: ConnectorCapability | null;
}> {
  return [
    { method: 'GET', path: `${prefix}/manifest`, capability: null },
    { method: 'GET', path: `${prefix}/reasoners`, capability: 'reasoners:read' },
    { method: 'GET', path: `${prefix}/reasoners/${nodeId}.summarize`, capability: 'reasoners:read' },
    { method: 'GET', path: `${prefix}/groups`, capability: 'reasoners:read' },
    { method: 'GET', path: `${prefix}/groups/${nodeId}`, capability: 'reasoners:read' },
    { method: 'GET', path: `${prefix}/reasoners/${nodeId}/versions`, capability: 'versions:read' },
    { method: 'GET', path: `${prefix}/reasoners/${nodeId}/versions/1.0.0`, capability: 'versions:read' },
    {
      method: 'PUT',
      path: `${prefix}/reasoners/${nodeId}/versions/1.0.0/weight`,
      body: { weight: 100 },
      capability: 'versions:write',
    },
    // The agent behind 127.0.0.1:9 is unreachable: past the guard this is a 502.
    { method: 'POST', path: `${prefix}/reasoners/${nodeId}/versions/1.0.0/restart`, capability: 'restart' },
    { method: 'GET', path: `${prefix}/configs`, capability: 'config_management' },
  ];
}

const everyEndpoint = CONNECTOR_PREFIXES.flatMap(endpoints);

describe('connector authentication', () => {
  it('answers 401 unauthorized with WWW-Authenticate: Bearer without a token, on every endpoint', async () => {
    for (const e of everyEndpoint) {
      const response = await call(cp.base, e.method, e.path, e.body);
      expectProblem(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate'), e.path).toBe('Bearer');
      expect(response.body.detail).toBe('This endpoint needs the connector token.');
    }
  });

  it('answers 401 for a wrong token in either carrier, and never echoes the token', async () => {
    for (const e of everyEndpoint) {
      for (const headers of [
        { Authorization: 'Bearer wrong' },
        { 'X-Connector-Token': 'wrong' },
      ] as Headers[]) {
        const response = await call(cp.base, e.method, e.path, e.body, headers);
        expectProblem(response, 401, 'unauthorized');
        expect(JSON.stringify(response.body)).not.toContain(TOKEN);
      }
    }
  });

  it('accepts the token as Authorization: Bearer and as X-Connector-Token, on both prefixes', async () => {
    for (const prefix of CONNECTOR_PREFIXES) {
      for (const headers of [
        BEARER,
        { 'X-Connector-Token': TOKEN },
        { authorization: `bearer   ${TOKEN}  ` },
      ] as Headers[]) {
        const response = await call(cp.base, 'GET', `${prefix}/reasoners`, undefined, headers);
        expect(response.status).toBe(200);
      }
    }
  });

  it('lets X-Connector-Token decide when present: a wrong one is not rescued by a right bearer', async () => {
    const headers = { 'X-Connector-Token': 'wrong', Authorization: `Bearer ${TOKEN}` };
    expectProblem(
      await call(cp.base, 'GET', '/connector/reasoners', undefined, headers),
      401,
      'unauthorized',
    );
    // An empty X-Connector-Token (an unset variable in a script) carries nothing and hides nothing.
    const empty = { 'X-Connector-Token': '', Authorization: `Bearer ${TOKEN}` };
    expect((await call(cp.base, 'GET', '/connector/reasoners', undefined, empty)).status).toBe(200);
  });

  it('refuses other schemes, empty bearers and near misses of the token', async () => {
    const near: Headers[] = [
      { Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
      { Authorization: 'Bearer' },
      { Authorization: 'Bearer ' },
      { Authorization: TOKEN },
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { Authorization: `Bearer ${TOKEN.toUpperCase()}` },
      { 'X-Connector-Token': `${TOKEN} ${TOKEN}` },
    ];
    for (const headers of near) {
      expectProblem(
        await call(cp.base, 'GET', '/connector/reasoners', undefined, headers),
        401,
        'unauthorized',
      );
    }
  });

  it('accepts a token configured with surrounding whitespace, which no header can carry', async () => {
    // A token read from a secret file often ends in a newline; HTTP strips whitespace around a
    // header value, so compared as configured it could never match and the connector stayed 401.
    const padded = await controlPlane({ token: `  ${TOKEN}\n` });
    try {
      for (const headers of [BEARER, { 'X-Connector-Token': TOKEN }] as Headers[]) {
        expect((await call(padded.base, 'GET', '/connector/manifest', undefined, headers)).status).toBe(200);
      }
      expectProblem(
        await call(padded.base, 'GET', '/connector/manifest', undefined, { Authorization: 'Bearer x' }),
        401,
        'unauthorized',
      );
    } finally {
      await padded.close();
    }
  });

  it('is neither protected nor unlocked by the API key', async () => {
    // The API key alone (every carrier) is not the connector token.
    for (const headers of [{ 'X-API-Key': API_KEY }, { Authorization: `Bearer ${API_KEY}` }] as Headers[]) {
      expectProblem(
        await call(cp.base, 'GET', '/connector/reasoners', undefined, headers),
        401,
        'unauthorized',
      );
    }
    expectProblem(await call(cp.base, 'GET', `/connector/reasoners?api_key=${API_KEY}`), 401, 'unauthorized');
    // The connector token needs no API key beside it, and does not open the rest of the API.
    expect((await call(cp.base, 'GET', '/api/v1/connector/groups', undefined, BEARER)).status).toBe(200);
    expectProblem(
      await call(cp.base, 'GET', '/api/v1/discovery/capabilities', undefined, BEARER),
      401,
      'unauthorized',
    );
  });

  it('answers 503 service_unavailable on every endpoint when no token is configured', async () => {
    for (const token of [undefined, '']) {
      const disabled = await controlPlane({ token });
      try {
        for (const e of everyEndpoint) {
          for (const headers of [{}, BEARER]) {
            const response = await call(disabled.base, e.method, e.path, e.body, headers);
            expectProblem(response, 503, 'service_unavailable');
            expect(response.body.detail).toMatch(/SERVICE_CONNECTOR_TOKEN/);
          }
        }
      } finally {
        await disabled.close();
      }
    }
  });

  it('leaves unknown connector paths and methods to the router: 404 and 405 problems', async () => {
    expectProblem(await call(cp.base, 'GET', '/connector/nothing', undefined, BEARER), 404, 'not_found');
    const wrongMethod = await call(cp.base, 'DELETE', '/connector/reasoners', undefined, BEARER);
    expectProblem(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('connector capabilities', () => {
  it('answers 403 forbidden naming the capability on every endpoint when none is granted', async () => {
    const bare = await controlPlane({ capabilities: [] });
    try {
      for (const e of everyEndpoint) {
        const response = await call(bare.base, e.method, e.path, e.body, BEARER);
        if (e.capability === null) {
          expect(response.status).toBe(200);
          continue;
        }
        expectProblem(response, 403, 'forbidden');
        expect(response.body.detail).toContain(
          `lacks the capability ${e.capability}, needed for ${e.method} `,
        );
        if (e.method === 'PUT') {
          const template = e.path.startsWith('/api/') ? '/api/v1/connector' : '/connector';
          expect(response.body.detail).toBe(
            `This token lacks the capability versions:write, needed for PUT ${template}/reasoners/:id/versions/:version/weight (this deployment grants: none).`,
          );
        }
        expect(response.body.capability).toBe(e.capability);
      }
    } finally {
      await bare.close();
    }
  });

  it('opens exactly the endpoints of each granted capability', async () => {
    for (const granted of CONNECTOR_CAPABILITIES) {
      const one = await controlPlane({ capabilities: [granted] });
      try {
        for (const e of everyEndpoint) {
          const response = await call(one.base, e.method, e.path, e.body, BEARER);
          if (e.capability === null || e.capability === granted) {
            // Past the guard: the restart reaches the (unreachable) agent, the rest succeed.
            expect(response.status, `${granted} ${e.method} ${e.path}`).toBe(
              e.capability === 'restart' ? 502 : 200,
            );
          } else {
            expectProblem(response, 403, 'forbidden');
            expect(response.body.capability).toBe(e.capability);
          }
        }
        const manifest = await call(one.base, 'GET', '/connector/manifest', undefined, BEARER);
        expect(manifest.body.capabilities).toEqual([granted]);
      } finally {
        await one.close();
      }
    }
  });

  it('checks the token before the capability: no token is 401 even where the capability is missing', async () => {
    const bare = await controlPlane({ capabilities: [] });
    try {
      expectProblem(await call(bare.base, 'GET', '/connector/reasoners'), 401, 'unauthorized');
    } finally {
      await bare.close();
    }
  });
});

describe('GET /connector/manifest', () => {
  it('lists the service, every endpoint under the prefix asked with its capability, and the grants', async () => {
    const limited = await controlPlane({ capabilities: ['reasoners:read', 'versions:read'] });
    try {
      for (const prefix of CONNECTOR_PREFIXES) {
        const response = await call(limited.base, 'GET', `${prefix}/manifest`, undefined, BEARER);
        expect(response.status).toBe(200);
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(response.body).toMatchObject({
          service: 'switchyard-control-plane',
          version: expect.stringMatching(/^\d+\.\d+\.\d+/),
          api_version: 'v1',
          base_path: prefix,
          capabilities: ['reasoners:read', 'versions:read'],
        });
        expect(response.body.endpoints).toEqual(
          expect.arrayContaining([
            { method: 'GET', path: `${prefix}/manifest`, capability: null, enabled: true },
            { method: 'GET', path: `${prefix}/reasoners/:id`, capability: 'reasoners:read', enabled: true },
            {
              method: 'PUT',
              path: `${prefix}/reasoners/:id/versions/:version/weight`,
              capability: 'versions:write',
              enabled: false,
            },
            {
              method: 'POST',
              path: `${prefix}/reasoners/:id/versions/:version/restart`,
              capability: 'restart',
              enabled: false,
            },
          ]),
        );
      }
    } finally {
      await limited.close();
    }
  });
});

describe('GET /connector/reasoners', () => {
  it('lists every reasoner and skill by target id, with node, versions and weights, without schemas', async () => {
    const response = await call(cp.base, 'GET', '/connector/reasoners', undefined, BEARER);
    expect(response.status).toBe(200);
    const mine = response.body.reasoners.filter((r: any) => r.node_id === nodeId || r.node_id === other);
    expect(mine.map((r: any) => [r.id, r.type, r.versions])).toEqual([
      [`${nodeId}.summarize`, 'reasoner', ['1.0.0', '1.1.0']],
      [`${nodeId}.translate`, 'reasoner', ['1.1.0']],
      [`${nodeId}.skill:word_count`, 'skill', ['1.0.0', '1.1.0']],
      [`${other}.skill:ping`, 'skill', ['0.1.0']],
    ]);
    expect(response.body.total).toBe(response.body.reasoners.length);
    const summarize = mine[0];
    expect(summarize).toMatchObject({
      name: 'summarize',
      group_id: nodeId,
      status: 'ready',
      routable: true,
      total_weight: 200,
      routable_weight: 200,
      tags: ['nlp'],
    });
    expect(summarize).not.toHaveProperty('input_schema');
  });
});

describe('GET /connector/reasoners/:id', () => {
  it('answers one reasoner with its schemas, described by the newest ready version', async () => {
    const response = await call(
      cp.base,
      'GET',
      `/connector/reasoners/${nodeId}.summarize`,
      undefined,
      BEARER,
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: `${nodeId}.summarize`,
      type: 'reasoner',
      description: 'Summarises text, v2',
      input_schema: { type: 'object' },
      described_by_version: '1.1.0',
      versions: ['1.0.0', '1.1.0'],
    });
  });

  it('answers skills by <node>.skill:<id>, and reasoners also by <node>.reasoner:<id>', async () => {
    const skill = await call(cp.base, 'GET', `/connector/reasoners/${other}.skill:ping`, undefined, BEARER);
    expect(skill.body).toMatchObject({ id: `${other}.skill:ping`, type: 'skill', tags: ['util'] });
    const spelled = await call(
      cp.base,
      'GET',
      `/connector/reasoners/${nodeId}.reasoner:translate`,
      undefined,
      BEARER,
    );
    expect(spelled.body).toMatchObject({ id: `${nodeId}.translate`, versions: ['1.1.0'] });
  });

  it('answers 404 for an unknown node or function, a bare node id, or a skill asked as a reasoner', async () => {
    for (const id of [`nobody-${nodeId}.summarize`, `${nodeId}.nothing`, nodeId, `${other}.ping`]) {
      const response = await call(cp.base, 'GET', `/connector/reasoners/${id}`, undefined, BEARER);
      expectProblem(response, 404, 'not_found');
    }
  });
});

describe('GET /connector/groups', () => {
  it('lists one group per node id with its versions, functions and total weight', async () => {
    const response = await call(cp.base, 'GET', '/connector/groups', undefined, BEARER);
    const group = response.body.groups.find((g: any) => g.id === nodeId);
    expect(group).toMatchObject({
      node_id: nodeId,
      status: 'ready',
      total_weight: 200,
      routable_weight: 200,
      functions: [`${nodeId}.summarize`, `${nodeId}.translate`, `${nodeId}.skill:word_count`],
    });
    expect(group.versions.map((v: any) => [v.version, v.traffic_weight, v.traffic_share])).toEqual([
      ['1.0.0', 100, 0.5],
      ['1.1.0', 100, 0.5],
    ]);
    expect(response.body.total).toBe(response.body.groups.length);
  });

  it('answers one group, and 404 for an unknown or impossible group id', async () => {
    const one = await call(cp.base, 'GET', `/api/v1/connector/groups/${other}`, undefined, BEARER);
    expect(one.body).toMatchObject({ id: other, functions: [`${other}.skill:ping`], total_weight: 100 });
    for (const id of [`nobody-${other}`, `${other}.skill:ping`, 'a'.repeat(201)]) {
      expectProblem(
        await call(cp.base, 'GET', `/connector/groups/${id}`, undefined, BEARER),
        404,
        'not_found',
      );
    }
  });
});

describe('GET /connector/reasoners/:id/versions', () => {
  it('lists the versions of a node with weight, share, status, health and heartbeat', async () => {
    const response = await call(cp.base, 'GET', `/connector/reasoners/${nodeId}/versions`, undefined, BEARER);
    expect(response.body).toMatchObject({ id: nodeId, type: 'node', node_id: nodeId, total_weight: 200 });
    expect(response.body.versions).toHaveLength(2);
    expect(response.body.versions[0]).toMatchObject({
      version: '1.0.0',
      traffic_weight: 100,
      traffic_share: 0.5,
      routable: true,
      status: 'ready',
      admin_state: 'active',
      base_url: 'http://127.0.0.1:9',
      last_heartbeat: expect.stringMatching(/Z$/),
      health: { consecutive_failures: 0 },
    });
  });

  it('lists only the versions serving a function when :id is a function target', async () => {
    const response = await call(
      cp.base,
      'GET',
      `/connector/reasoners/${nodeId}.translate/versions`,
      undefined,
      BEARER,
    );
    expect(response.body).toMatchObject({ id: `${nodeId}.translate`, type: 'reasoner', total_weight: 100 });
    expect(response.body.versions.map((v: any) => [v.version, v.traffic_share])).toEqual([['1.1.0', 1]]);
  });

  it('answers one version, and 404 for an unknown version or one the function is not served by', async () => {
    const one = await call(
      cp.base,
      'GET',
      `/connector/reasoners/${nodeId}/versions/1.1.0`,
      undefined,
      BEARER,
    );
    expect(one.body).toMatchObject({ node_id: nodeId, version: '1.1.0', traffic_weight: 100 });
    for (const path of [
      `${nodeId}/versions/9.9.9`,
      `${nodeId}.translate/versions/1.0.0`,
      `nobody-x/versions/1.0.0`,
    ]) {
      const response = await call(cp.base, 'GET', `/connector/reasoners/${path}`, undefined, BEARER);
      expectProblem(response, 404, 'not_found');
    }
  });

  it('addresses versions with any characters registration takes (unicode, spaces, slashes)', async () => {
    const id = uniqueNodeId('conn-unicode');
    for (const version of ['2.0.0-β+build 7', 'release/2026']) {
      await registerReady(cp, id, version);
      const path = `/connector/reasoners/${id}/versions/${encodeURIComponent(version)}`;
      const response = await call(cp.base, 'GET', path, undefined, BEARER);
      expect(response.body).toMatchObject({ version });
    }
  });
});

describe('hostile ids and versions', () => {
  const hostile = [
    '..',
    '%2e%2e',
    '..%2F..%2Fapi%2Fv1%2Fnodes',
    '%2Fetc%2Fpasswd',
    'a'.repeat(5000),
    `${'a'.repeat(201)}.fn`,
    '%00',
    'n%0Aode',
    '%E2%9C%93-agent',
    '%F0%9F%98%80.summarize',
    "x'%3B drop table node_instances;--",
    '%E0%A4%A', // not valid percent-encoded UTF-8
    'node.skill:',
    '.summarize',
    'node..x',
  ];

  it('answers 404 not_found for ids that could never exist, on every path that takes one', async () => {
    for (const id of hostile) {
      for (const suffix of ['', '/versions', '/versions/1.0.0']) {
        const response = await call(cp.base, 'GET', `/connector/reasoners/${id}${suffix}`, undefined, BEARER);
        // `..` and `%2e%2e` are dot segments fetch resolves away; they land on other paths' 404s.
        expectProblem(response, 404, 'not_found');
      }
      const weight = await call(
        cp.base,
        'PUT',
        `/connector/reasoners/${id}/versions/1.0.0/weight`,
        { weight: 1 },
        BEARER,
      );
      expect([404, 405]).toContain(weight.status);
      expect(isProblem(weight.body)).toBe(true);
    }
    const still = await call(cp.base, 'GET', `/connector/reasoners/${nodeId}/versions`, undefined, BEARER);
    expect(still.body.versions.map((v: any) => v.traffic_weight)).toEqual([100, 100]);
  });

  it('answers 404 for versions over 100 characters without looking them up', async () => {
    const path = `/connector/reasoners/${nodeId}/versions/${'9'.repeat(101)}`;
    const response = await call(cp.base, 'GET', path, undefined, BEARER);
    expectProblem(response, 404, 'not_found');
    expect(response.body.detail).toMatch(/at most 100 characters/);
    expect(response.body.detail.length).toBeLessThan(300);
  });
});

describe('PUT /connector/reasoners/:id/versions/:version/weight', () => {
  const path = (id: string, version = '1.1.0') => `/connector/reasoners/${id}/versions/${version}/weight`;

  async function weights(): Promise<number[]> {
    const response = await call(cp.base, 'GET', `/connector/reasoners/${nodeId}/versions`, undefined, BEARER);
    return response.body.versions.map((v: any) => v.traffic_weight);
  }

  it('sets the weight, answers the version with its new share, and announces node.updated', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const unsubscribe = cp.events.subscribe(NODES_TOPIC, (event) => seen.push(event));
    try {
      const response = await call(cp.base, 'PUT', path(nodeId), { weight: 300 }, BEARER);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ version: '1.1.0', traffic_weight: 300, traffic_share: 0.75 });
      expect(seen).toEqual([
        { type: 'node.updated', node_id: nodeId, version: '1.1.0', timestamp: expect.any(String) },
      ]);
      // The same weight again writes nothing and announces nothing.
      expect((await call(cp.base, 'PUT', path(nodeId), { weight: 300 }, BEARER)).status).toBe(200);
      expect(seen).toHaveLength(1);
    } finally {
      unsubscribe();
    }
    expect(await weights()).toEqual([100, 300]);
  });

  it('answers every one of many concurrent weight changes, the last written staying', async () => {
    // Each change used to read the row, then write it only if its revision had not moved, giving
    // up (500) after 8 lost races: a pipeline setting weights in parallel lost some of them.
    const weightsSent = Array.from({ length: 40 }, (_, i) => i + 1);
    const answers = await Promise.all(
      weightsSent.map((weight) =>
        call(cp.base, 'PUT', path(nodeId, '1.0.0'), { weight }, BEARER).then((r) => r.status),
      ),
    );
    expect(answers).toEqual(weightsSent.map(() => 200));
    expect(weightsSent).toContain((await weights())[0]);
    expect(cp.errors).toEqual([]);
    await call(cp.base, 'PUT', path(nodeId, '1.0.0'), { weight: 100 }, BEARER);
  });

  it('sets a node version through a function id too, the weight applying to the whole version', async () => {
    const response = await call(cp.base, 'PUT', path(`${nodeId}.skill:word_count`), { weight: 0 }, BEARER);
    expect(response.body).toMatchObject({ traffic_weight: 0, traffic_share: 0, routable: false });
    expect(await weights()).toEqual([100, 0]);
    // Every function of 1.1.0 is out of routing, including ones not named in the path.
    const translate = await call(
      cp.base,
      'GET',
      `/connector/reasoners/${nodeId}.translate`,
      undefined,
      BEARER,
    );
    expect(translate.body).toMatchObject({ routable: false, routable_weight: 0 });
    await call(cp.base, 'PUT', path(nodeId), { weight: 100 }, BEARER);
  });

  it('takes the bounds 0 and 10000 and whole numbers written as 5.0 or 1e3', async () => {
    for (const [text, expected] of [
      ['{"weight":0}', 0],
      ['{"weight":10000}', 10000],
      ['{"weight":5.0}', 5],
      ['{"weight":1e3}', 1000],
      ['{"weight":100}', 100],
    ] as const) {
      const response = await call(cp.base, 'PUT', path(nodeId), text, BEARER);
      expect(response.body.traffic_weight).toBe(expected);
    }
  });

  it('refuses every weight that is not a whole number from 0 to 10000 with 400, changing nothing', async () => {
    const before = await weights();
    const bad: unknown[] = [
      {},
      { weight: null },
      { weight: '10' },
      { weight: 1.5 },
      { weight: -1 },
      { weight: 10001 },
      { weight: 1e300 },
      { weight: true },
      { weight: [10] },
      { weight: { value: 10 } },
      { weight: 10, extra: 1 },
      { Weight: 10 },
      [{ weight: 10 }],
      10,
      'null',
      '"weight"',
    ];
    for (const body of bad) {
      const response = await call(cp.base, 'PUT', path(nodeId), body, BEARER);
      expectProblem(response, 400, 'invalid_request');
      expect(response.body.errors.length, JSON.stringify(body)).toBeGreaterThan(0);
    }
    const weight = await call(cp.base, 'PUT', path(nodeId), { weight: 1.5 }, BEARER);
    expect(weight.body.errors).toEqual([
      { field: 'weight', message: 'must be a whole number from 0 to 10000' },
    ]);
    expect(await weights()).toEqual(before);
  });

  it('refuses malformed, missing, mistyped, nested and oversized bodies', async () => {
    const before = await weights();
    expectProblem(await call(cp.base, 'PUT', path(nodeId), '{"weight":', BEARER), 400, 'invalid_request');
    expectProblem(await call(cp.base, 'PUT', path(nodeId), undefined, BEARER), 400, 'invalid_request');
    const text = await call(cp.base, 'PUT', path(nodeId), '{"weight":5}', {
      ...BEARER,
      'content-type': 'text/plain',
    });
    expect(text.status).toBeGreaterThanOrEqual(400);
    expect(isProblem(text.body)).toBe(true);
    const nested = `{"weight":${'['.repeat(100)}${']'.repeat(100)}}`;
    expectProblem(await call(cp.base, 'PUT', path(nodeId), nested, BEARER), 400, 'invalid_request');
    const big = JSON.stringify({ weight: 5, pad: 'x'.repeat(2000) });
    expectProblem(await call(cp.base, 'PUT', path(nodeId), big, BEARER), 413, 'payload_too_large');
    expect(await weights()).toEqual(before);
  });

  it('answers 404 for an unknown node, version, or a version not serving the function in the path', async () => {
    for (const target of [
      path(`nobody-${nodeId}`),
      path(nodeId, '7.7.7'),
      path(`${nodeId}.translate`, '1.0.0'),
    ]) {
      expectProblem(await call(cp.base, 'PUT', target, { weight: 5 }, BEARER), 404, 'not_found');
    }
  });
});

describe('stored configuration under the connector', () => {
  it('serves /connector/configs/* with config_management on both prefixes, the same records as /api/v1/configs', async () => {
    const name = `conn-${Date.now()}`;
    const text = 'team: connector\n';
    for (const prefix of CONNECTOR_PREFIXES) {
      const stored = await call(cp.base, 'PUT', `${prefix}/configs/${name}`, text, {
        ...BEARER,
        'content-type': 'text/plain',
        'X-Updated-By': 'pipeline',
      });
      expect([200, 201]).toContain(stored.status);
      expect(stored.body).toMatchObject({ name, updated_by: 'pipeline' });
      const list = await call(cp.base, 'GET', `${prefix}/configs`, undefined, BEARER);
      expect(list.body.configs.map((c: any) => c.name)).toContain(name);
    }
    const viaApi = await call(cp.base, 'GET', `/api/v1/configs/${name}`, undefined, { 'X-API-Key': API_KEY });
    expect(viaApi.body).toMatchObject({ name, version: 2 });
    expect((await call(cp.base, 'DELETE', `/connector/configs/${name}`, undefined, BEARER)).status).toBe(204);
    // The API key does not open the connector's configs, nor the token the API's.
    expectProblem(
      await call(cp.base, 'GET', '/connector/configs', undefined, { 'X-API-Key': API_KEY }),
      401,
      'unauthorized',
    );
    expectProblem(await call(cp.base, 'GET', '/api/v1/configs', undefined, BEARER), 401, 'unauthorized');
  });

  it('answers 403 naming config_management when it is not granted (the default), and 503 when disabled', async () => {
    const defaults = await controlPlane({
      capabilities: ['reasoners:read', 'versions:read', 'versions:write', 'restart'],
    });
    try {
      for (const prefix of CONNECTOR_PREFIXES) {
        for (const [method, path] of [
          ['GET', `${prefix}/configs`],
          ['GET', `${prefix}/configs/control-plane`],
          ['PUT', `${prefix}/configs/control-plane`],
          ['DELETE', `${prefix}/configs/control-plane`],
          ['POST', `${prefix}/configs/reload`],
        ] as const) {
          const response = await call(
            defaults.base,
            method,
            path,
            method === 'PUT' ? 'x: 1' : undefined,
            BEARER,
          );
          expectProblem(response, 403, 'forbidden');
          expect(response.body.detail).toContain(
            `lacks the capability config_management, needed for ${method} ${prefix}/configs`,
          );
        }
        const manifest = await call(defaults.base, 'GET', `${prefix}/manifest`, undefined, BEARER);
        expect(manifest.body.endpoints).toEqual(
          expect.arrayContaining([
            { method: 'GET', path: `${prefix}/configs`, capability: 'config_management', enabled: false },
            {
              method: 'PUT',
              path: `${prefix}/configs/:config_name`,
              capability: 'config_management',
              enabled: false,
            },
            {
              method: 'POST',
              path: `${prefix}/configs/reload`,
              capability: 'config_management',
              enabled: false,
            },
          ]),
        );
      }
    } finally {
      await defaults.close();
    }
  });
});
