import { randomBytes } from 'node:crypto';
import { isProblem } from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTOR_CAPABILITIES } from '../src/modules/connector/index.ts';
import { CONNECTOR_ANSWER_BYTES, createConnectorListings } from '../src/modules/connector/listings.ts';
import {
  GroupListQuerySchema,
  REASONER_LIST_MAX_LIMIT,
  ReasonerListQuerySchema,
} from '../src/modules/connector/schemas.ts';
import type { NodeInstanceRecord } from '../src/modules/nodes/index.ts';
import { listNodeInstances } from '../src/modules/nodes/index.ts';
import { createPostgresEventBus, type EventBus } from '../src/platform/events/index.ts';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';
import { expectDocumented } from './helpers/openapi.ts';

/*
 * The connector's lists (GET /connector/reasoners and /connector/groups) over a large fleet:
 * paged by cursor, bounded in bytes, cached and cleared by node changes. The fleet is registered
 * the way agents do it, through the registration API. See content/api/connector.md
 * ("Pages, size and cache").
 */

const TOKEN = 'connector-lists-token-3c9e';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const NODES = 120;
const FUNCTIONS = 1000;
/** Nodes whose functions carry long descriptions, so a page of 1,000 of them passes the bound. */
const WORDY = new Set([7, 8]);

type Answer = { status: number; headers: globalThis.Headers; body: any };

const nodeName = (n: number) => `fleet-${String(n).padStart(3, '0')}`;

/**
 * A registration of `functions` functions: every fourth a skill, the rest reasoners, in an order
 * that is not the list's (the list sorts by name). About 80 KB, or 950 KB for a wordy node.
 */
function fleetRegistration(id: string, functions = FUNCTIONS, wordy = false) {
  const reasoners: unknown[] = [];
  const skills: unknown[] = [];
  for (let i = functions - 1; i >= 0; i--) {
    const fn = {
      id: `fn_${String(i).padStart(4, '0')}`,
      description: wordy ? `${id} function ${i} `.padEnd(880, 'x') : `${id} function ${i}`,
      tags: ['fleet'],
    };
    (i % 4 === 3 ? skills : reasoners).push(fn);
  }
  return { id, version: '1.0.0', base_url: 'http://127.0.0.1:9', reasoners, skills };
}

/** The ids the lists give a registration's functions, in list order. */
function idsOf(id: string, functions = FUNCTIONS): string[] {
  const names = Array.from({ length: functions }, (_, i) => i);
  const reasoners = names.filter((i) => i % 4 !== 3).map((i) => `${id}.fn_${String(i).padStart(4, '0')}`);
  const skills = names.filter((i) => i % 4 === 3).map((i) => `${id}.skill:fn_${String(i).padStart(4, '0')}`);
  return [...reasoners, ...skills];
}

async function register(cp: TestControlPlane, body: ReturnType<typeof fleetRegistration>): Promise<void> {
  const response = await fetch(`${cp.base}/api/v1/nodes/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.text()).toBe(201);
}

function expectProblem(response: Answer, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(isProblem(response.body)).toBe(true);
  expect(response.body.code).toBe(code);
}

/** One page, held to the byte bound and to the OpenAPI document. */
async function page(cp: TestControlPlane, path: string): Promise<Answer> {
  const response = await fetch(`${cp.base}${path}`, { headers: BEARER });
  const text = await response.text();
  expect(response.status, text.slice(0, 300)).toBe(200);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(CONNECTOR_ANSWER_BYTES);
  const answer = { status: response.status, headers: response.headers, body: JSON.parse(text) };
  await expectDocumented(cp.base, 'GET', path, answer);
  return answer;
}

let cp: TestControlPlane;

beforeAll(async () => {
  cp = await startTestControlPlane({
    config: (config) => {
      config.connector.token = TOKEN;
      config.connector.capabilities = [...CONNECTOR_CAPABILITIES];
    },
  });
  // Two registrations in flight at a time: the machine running the tests has two cores.
  const queue = Array.from({ length: NODES }, (_, n) => n);
  await Promise.all(
    [0, 1].map(async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        await register(cp, fleetRegistration(nodeName(n), FUNCTIONS, WORDY.has(n)));
      }
    }),
  );
}, 120_000);

afterAll(async () => {
  await cp?.close();
});

describe('GET /connector/reasoners with 120 nodes of 1,000 functions', () => {
  it('lists every function exactly once over pages within the byte bound, and a node registered between pages where it sorts', async () => {
    const listed: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    // Registered during the crawl: one sorting after the page where it is registered, one before.
    const late = 'fleet-060-late';
    const early = 'fleet-000-early';
    do {
      const path = `/connector/reasoners?limit=${REASONER_LIST_MAX_LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
      const answer = await page(cp, path);
      const ids = answer.body.reasoners.map((r: { id: string }) => r.id);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.length).toBeLessThanOrEqual(REASONER_LIST_MAX_LIMIT);
      listed.push(...ids);
      sizes.push(ids.length);
      cursor = answer.body.next_cursor;
      pages += 1;
      if (pages === 3) {
        // The crawl is in fleet-002 now: fleet-000-early sorts before it (after fleet-000: a node
        // id sorts before the longer ids it starts), fleet-060-late after.
        expect(ids.at(-1)).toMatch(/^fleet-002\./);
        await register(cp, fleetRegistration(late, 10));
        await register(cp, fleetRegistration(early, 10));
        expect(answer.body.total).toBe(NODES * FUNCTIONS);
      }
      if (pages > 3) expect(answer.body.total).toBe(NODES * FUNCTIONS + 20);
    } while (cursor !== null);

    const expected: string[] = [];
    for (let n = 0; n < NODES; n++) {
      expected.push(...idsOf(nodeName(n)));
      if (n === 60) expected.push(...idsOf(late, 10));
    }
    // Every function once, in list order: fleet-000-early was registered behind the cursor and is
    // not listed (it is on the first page of the next crawl); nothing moved onto two pages.
    expect(listed.length).toBe(expected.length);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual(expected);
    // The wordy nodes' pages ended before 1,000 functions: the byte bound cut them.
    expect(sizes.slice(0, -1).some((size) => size < REASONER_LIST_MAX_LIMIT)).toBe(true);

    // A new crawl lists fleet-000-early, between fleet-000 and fleet-001.
    const first = await page(cp, `/connector/reasoners?limit=${FUNCTIONS}`);
    const next = await page(cp, `/connector/reasoners?limit=20&cursor=${first.body.next_cursor}`);
    expect(next.body.reasoners.map((r: { id: string }) => r.id)).toEqual([
      ...idsOf(early, 10),
      ...idsOf(nodeName(1)).slice(0, 10),
    ]);
  }, 120_000);

  it('answers the summary record of each function, with its versions and weights', async () => {
    const answer = await page(cp, '/connector/reasoners?limit=2');
    expect(answer.body.reasoners[0]).toEqual({
      id: 'fleet-000.fn_0000',
      type: 'reasoner',
      name: 'fn_0000',
      node_id: 'fleet-000',
      group_id: 'fleet-000',
      description: 'fleet-000 function 0',
      tags: ['fleet'],
      status: 'starting',
      routable: false,
      versions: ['1.0.0'],
      total_weight: 100,
      routable_weight: 0,
    });
    expect(answer.body.next_cursor).toEqual(expect.any(String));
  });

  it('serves a page again from cache until a node changes', async () => {
    const path = '/connector/reasoners?limit=5';
    const before = await page(cp, path);
    const again = await page(cp, path);
    expect(again.headers.get('x-connector-cache')).toBe('hit');
    expect(again.body).toEqual(before.body);
    await register(cp, fleetRegistration('aaa-first', 3));
    const after = await page(cp, path);
    expect(after.headers.get('x-connector-cache')).toBe('miss');
    expect(after.body.total).toBe(before.body.total + 3);
    expect(after.body.reasoners.map((r: { id: string }) => r.id)).toEqual([
      ...idsOf('aaa-first', 3),
      ...before.body.reasoners.slice(0, 2).map((r: { id: string }) => r.id),
    ]);
  });
});

describe('GET /connector/groups with 120 nodes of 1,000 functions', () => {
  it('lists every group exactly once over pages within the byte bound', async () => {
    const listed: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const answer = await page(cp, `/connector/groups?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      const groups = answer.body.groups as Array<{ id: string; functions: string[] }>;
      expect(groups.length).toBeGreaterThan(0);
      for (const group of groups) {
        if (group.id.startsWith('fleet-') && group.id.length === 9) {
          expect(group.functions).toHaveLength(FUNCTIONS);
        }
      }
      listed.push(...groups.map((g) => g.id));
      sizes.push(groups.length);
      expect(answer.body.total).toBe(NODES + 3);
      cursor = answer.body.next_cursor;
    } while (cursor !== null);
    const expected = ['aaa-first', 'fleet-000', 'fleet-000-early'];
    for (let n = 1; n < NODES; n++) expected.push(nodeName(n), ...(n === 60 ? ['fleet-060-late'] : []));
    expect(listed).toEqual(expected);
    // A group of 1,000 functions is about 50 KB: 1 MiB holds about twenty of them.
    expect(sizes.length).toBeGreaterThan(3);
    expect(Math.max(...sizes)).toBeLessThan(40);
  }, 60_000);
});

describe('connector list paging errors', () => {
  const cases: Array<[string, string]> = [
    ['/connector/reasoners?limit=0', 'limit'],
    [`/connector/reasoners?limit=${REASONER_LIST_MAX_LIMIT + 1}`, 'limit'],
    ['/connector/reasoners?limit=ten', 'limit'],
    ['/connector/reasoners?limit=1&limit=2', 'limit'],
    ['/connector/reasoners?cursor=not*base64', 'cursor'],
    // A group cursor (a node id) is not a reasoners cursor, and the other way round.
    [`/connector/reasoners?cursor=${Buffer.from('fleet-001').toString('base64url')}`, 'cursor'],
    [`/api/v1/connector/groups?cursor=${Buffer.from('fleet-001.fn_0001').toString('base64url')}`, 'cursor'],
    // Only the canonical spelling is ever given out.
    [
      `/connector/reasoners?cursor=${Buffer.from('fleet-001.reasoner:fn_0001').toString('base64url')}`,
      'cursor',
    ],
    ['/connector/groups?limit=501', 'limit'],
    ['/connector/groups?cursor=', 'cursor'],
  ];
  for (const [path, field] of cases) {
    it(`answers 400 invalid_request naming ${field} for ${path.slice(0, 70)}`, async () => {
      const response = await call(cp.base, 'GET', path, undefined, BEARER);
      expectProblem(response, 400, 'invalid_request');
      expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    });
  }
});

describe('connector lists across replicas', () => {
  const databaseUrl = process.env.DATABASE_URL;

  it('shows a node registered on one replica in the other replica’s cached lists', async () => {
    // On PostgreSQL each replica has its own LISTEN/NOTIFY bus, as in production; PGlite serves
    // one process, where replicas share the in-process bus.
    const channelPrefix = `sy_lists_${randomBytes(4).toString('hex')}_`;
    const buses: EventBus[] = databaseUrl
      ? [
          createPostgresEventBus(databaseUrl, { channelPrefix }),
          createPostgresEventBus(databaseUrl, { channelPrefix }),
        ]
      : [];
    const options = (bus: EventBus | undefined) => ({
      handle: cp.handle,
      events: bus ?? cp.events,
      config: (config: TestControlPlane['config']) => {
        config.connector.token = TOKEN;
        config.connector.capabilities = [...CONNECTOR_CAPABILITIES];
      },
    });
    const a = await startTestControlPlane(options(buses[0]));
    const b = await startTestControlPlane(options(buses[1]));
    try {
      const path = '/connector/groups?limit=1';
      const before = await page(b, path);
      expect((await page(b, path)).headers.get('x-connector-cache')).toBe('hit');
      await register(a, fleetRegistration('aa-replica', 2));
      await expect
        .poll(async () => (await page(b, path)).body.groups[0]?.id, { timeout: 10_000 })
        .toBe('aa-replica');
      expect((await page(b, path)).body.total).toBe(before.body.total + 1);
    } finally {
      await b.close();
      await a.close();
    }
  });
});

describe('connector listings', () => {
  it('puts at least one entry on a page, even one larger than the bound, and continues after it', async () => {
    const instances = await listNodeInstances(cp.handle.db, { nodeId: nodeName(7) }, 'summary');
    const small = await listNodeInstances(cp.handle.db, { nodeId: nodeName(9) }, 'summary');
    const listings = createConnectorListings({
      listInstances: async () => [...instances, ...small] as NodeInstanceRecord[],
      cacheTtlMs: 30_000,
      maxAnswerBytes: 1000,
    });
    const first = JSON.parse((await listings.groups(GroupListQuerySchema.parse({}))).body.toString());
    expect(first.groups.map((g: { id: string }) => g.id)).toEqual([nodeName(7)]);
    expect(first.total).toBe(2);
    const second = JSON.parse(
      (await listings.groups(GroupListQuerySchema.parse({ cursor: first.next_cursor }))).body.toString(),
    );
    expect(second.groups.map((g: { id: string }) => g.id)).toEqual([nodeName(9)]);
    expect(second.next_cursor).toBeNull();
    const reasoners = JSON.parse(
      (await listings.reasoners(ReasonerListQuerySchema.parse({ limit: '1000' }))).body.toString(),
    );
    expect(reasoners.reasoners).toHaveLength(1);
  });

  it('reads the fleet once for concurrent requests, and again after an invalidation', async () => {
    let reads = 0;
    const listings = createConnectorListings({
      listInstances: async () => {
        reads += 1;
        return listNodeInstances(cp.handle.db, { nodeId: nodeName(9) }, 'summary');
      },
      cacheTtlMs: 30_000,
    });
    const query = (limit: string) => ReasonerListQuerySchema.parse({ limit });
    await Promise.all(['1', '2', '3', '4', '5', '6'].map((limit) => listings.reasoners(query(limit))));
    expect(reads).toBe(1);
    expect((await listings.reasoners(query('1'))).cached).toBe(true);
    listings.invalidate();
    expect((await listings.reasoners(query('1'))).cached).toBe(false);
    expect(reads).toBe(2);
  });
});
