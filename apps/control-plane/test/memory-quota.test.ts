import { isProblem } from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';

/*
 * The per-scope quota of memory (memory.scope_max_entries, memory.scope_max_bytes): key-value
 * entries and vectors of one scope count together, a write past it is 409 quota_exceeded and
 * changes nothing, deleting frees room, and concurrent writers on two replicas never take a
 * scope past it. See content/concepts/memory.md ("Quota per scope").
 */

const MAX_ENTRIES = 10;
const MAX_BYTES = 4000;

let cp: TestControlPlane;
let replica: TestControlPlane;
let run = 0;
/** A workflow id no other test uses: each test fills a scope of its own. */
const workflow = () => {
  run += 1;
  return { 'X-Workflow-ID': `wf_quota_${run}` };
};

type Headers = Record<string, string>;
type Answer = { status: number; headers: globalThis.Headers; body: any };

function limited(handle?: TestControlPlane['handle']) {
  return startTestControlPlane({
    handle,
    events: cp?.events,
    config: (config) => {
      config.memory.scopeMaxEntries = MAX_ENTRIES;
      config.memory.scopeMaxBytes = MAX_BYTES;
    },
  });
}

beforeAll(async () => {
  cp = await limited();
  // Another replica on the same database, with the same settings.
  replica = await limited(cp.handle);
});

afterAll(async () => {
  await replica?.close();
  await cp?.close();
});

const set = (key: string, data: unknown, headers: Headers, at = cp) =>
  call(at.base, 'POST', '/api/v1/memory/set', { key, data }, headers);
const remove = (key: string, headers: Headers) =>
  call(cp.base, 'POST', '/api/v1/memory/delete', { key }, headers);
const store = (key: string, headers: Headers, at = cp) =>
  call(at.base, 'POST', '/api/v1/memory/vector', { key, embedding: [1, 0, 0, 0], metadata: {} }, headers);

/**
 * The size a value counts for: its key plus the value as PostgreSQL prints its jsonb. A string
 * of plain letters prints as itself in quotes.
 */
const sizeOf = (key: string, text: string) => key.length + text.length + 2;

function expectQuota(answer: Answer, scopeId: string, usage: { entries: number; bytes: number }) {
  expect(answer.status).toBe(409);
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  expect(isProblem(answer.body)).toBe(true);
  expect(answer.body).toMatchObject({
    code: 'quota_exceeded',
    scope: 'workflow',
    scope_id: scopeId,
    entries: usage.entries,
    bytes: usage.bytes,
    max_entries: MAX_ENTRIES,
    max_bytes: MAX_BYTES,
  });
}

/** What the scope holds, counted from the tables themselves (the oracle of the counter row). */
async function held(scopeId: string) {
  const result = await cp.handle.db.raw(
    `select count(*)::int as entries, coalesce(sum(bytes), 0)::int as bytes from (
       select bytes from memory_entries where scope = 'workflow' and scope_id = ?
       union all
       select bytes from memory_vectors where scope = 'workflow' and scope_id = ?) as stored`,
    [scopeId, scopeId],
  );
  const usage = await cp.handle
    .db('memory_scope_usage')
    .where({ scope: 'workflow', scope_id: scopeId })
    .first();
  const counted = (result.rows as Array<{ entries: number; bytes: number }>)[0]!;
  // The counter row agrees with the tables (and is gone once the scope is empty).
  expect(
    usage ? { entries: Number(usage.entries), bytes: Number(usage.bytes) } : { entries: 0, bytes: 0 },
  ).toEqual(counted);
  if (counted.entries === 0) expect(usage).toBeUndefined();
  return counted;
}

async function memoryEvents(): Promise<number> {
  const row = await cp.handle.db('event_log').where({ stream: 'memory' }).count({ n: '*' }).first();
  return Number(row?.n);
}

describe('memory scope quota: entries', () => {
  it('refuses the entry past memory.scope_max_entries with 409 quota_exceeded, changing nothing', async () => {
    const headers = workflow();
    const scopeId = headers['X-Workflow-ID'];
    for (let i = 0; i < MAX_ENTRIES; i++) expect((await set(`k${i}`, i, headers)).status).toBe(200);
    const before = await held(scopeId);
    expect(before.entries).toBe(MAX_ENTRIES);
    const events = await memoryEvents();

    const refused = await set('one-more', 1, headers);
    expectQuota(refused, scopeId, before);
    expect(refused.body.detail).toBe(
      `The workflow scope "${scopeId}" holds 10 entries, the most it may hold (memory.scope_max_entries is 10): delete keys or vectors from it before adding new ones.`,
    );
    expect(await held(scopeId)).toEqual(before);
    expect(await memoryEvents()).toBe(events);
    const get = await call(
      cp.base,
      'POST',
      '/api/v1/memory/get',
      { key: 'one-more', scope: 'workflow' },
      headers,
    );
    expect(get.status).toBe(404);

    // Replacing a key adds no entry; other scopes have quotas of their own.
    expect((await set('k0', 'replaced', headers)).status).toBe(200);
    expect((await set('one-more', 1, workflow())).status).toBe(200);
    expect((await set('one-more', 1, { 'X-Session-ID': scopeId })).status).toBe(200);

    // Deleting frees room at once.
    expect((await remove('k1', headers)).body).toMatchObject({ deleted: true });
    expect((await set('one-more', 1, headers)).status).toBe(200);
    expect((await held(scopeId)).entries).toBe(MAX_ENTRIES);
  });

  it('counts vectors and key-value entries of a scope together', async () => {
    const headers = workflow();
    const scopeId = headers['X-Workflow-ID'];
    for (let i = 0; i < MAX_ENTRIES - 1; i++) expect((await set(`k${i}`, i, headers)).status).toBe(200);
    expect((await store('v0', headers)).status).toBe(200);
    const full = await held(scopeId);
    expect(full.entries).toBe(MAX_ENTRIES);
    expectQuota(await store('v1', headers), scopeId, full);
    expectQuota(await set('k-extra', 1, headers), scopeId, full);
    expect(await held(scopeId)).toEqual(full);
    // Replacing the vector is no new entry; deleting it makes room for a key.
    expect((await store('v0', headers)).status).toBe(200);
    const removed = await call(cp.base, 'DELETE', '/api/v1/memory/vector/v0', undefined, headers);
    expect(removed.status).toBe(200);
    expect((await set('k-extra', 1, headers)).status).toBe(200);
  });
});

describe('memory scope quota: bytes', () => {
  it('refuses a value that would take the scope past memory.scope_max_bytes, also when it replaces one', async () => {
    const headers = workflow();
    const scopeId = headers['X-Workflow-ID'];
    const text = 'x'.repeat(1500);
    expect((await set('a', text, headers)).status).toBe(200);
    expect((await set('b', text, headers)).status).toBe(200);
    const two = await held(scopeId);
    expect(two).toEqual({ entries: 2, bytes: 2 * sizeOf('a', text) });

    const refused = await set('c', text, headers);
    expectQuota(refused, scopeId, two);
    expect(refused.body.detail).toBe(
      `The workflow scope "${scopeId}" holds ${two.bytes} bytes of keys and values; this write adds ${sizeOf('c', text)} bytes, past its quota of ${MAX_BYTES} (memory.scope_max_bytes): delete keys or vectors from it, or store less.`,
    );
    // An existing value may grow to the quota exactly, not a byte past it; shrinking always works.
    const exact = 'x'.repeat(text.length + MAX_BYTES - two.bytes);
    expect((await set('a', exact, headers)).status).toBe(200);
    const full = await held(scopeId);
    expect(full).toEqual({ entries: 2, bytes: MAX_BYTES });
    expectQuota(await set('a', `${exact}x`, headers), scopeId, full);
    expect((await call(cp.base, 'POST', '/api/v1/memory/get', { key: 'a' }, headers)).body.data).toBe(exact);
    expect((await set('a', 'small', headers)).status).toBe(200);
    expect((await set('c', text, headers)).status).toBe(200);
    expect(await held(scopeId)).toEqual({
      entries: 3,
      bytes: sizeOf('a', 'small') + sizeOf('b', text) + sizeOf('c', text),
    });
  });

  it('lets a scope over a lowered quota shrink and empty, never grow', async () => {
    const headers = workflow();
    const scopeId = headers['X-Workflow-ID'];
    for (let i = 0; i < 6; i++) expect((await set(`k${i}`, 'y'.repeat(100), headers)).status).toBe(200);
    const lowered = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.memory.scopeMaxEntries = 3;
        config.memory.scopeMaxBytes = 300;
      },
    });
    try {
      const at = (key: string, data: unknown) => set(key, data, headers, lowered);
      expect((await at('new', 1)).status).toBe(409);
      expect((await at('k0', 'y'.repeat(101))).status).toBe(409);
      expect((await at('k0', 'shorter')).status).toBe(200);
      for (let i = 0; i < 6; i++) {
        const deleted = await call(lowered.base, 'POST', '/api/v1/memory/delete', { key: `k${i}` }, headers);
        expect(deleted.body.deleted).toBe(true);
      }
      expect(await held(scopeId)).toEqual({ entries: 0, bytes: 0 });
      expect((await at('new', 1)).status).toBe(200);
    } finally {
      await lowered.close();
    }
  });
});

describe('memory scope quota: concurrent writers', () => {
  it('admits exactly the entries that fit when writers on two replicas race for the last room', async () => {
    const headers = workflow();
    const scopeId = headers['X-Workflow-ID'];
    for (let i = 0; i < MAX_ENTRIES - 4; i++) expect((await set(`k${i}`, i, headers)).status).toBe(200);
    // 30 new keys and vectors at once, half on each replica, for the last 4 entries.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const at = i % 2 === 0 ? cp : replica;
        return i % 3 === 0 ? store(`race-v${i}`, headers, at) : set(`race-${i}`, i, headers, at);
      }),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.filter((s) => s === 409)).toHaveLength(26);
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(answer.body.code).toBe('quota_exceeded');
      expect(answer.body.entries).toBe(MAX_ENTRIES);
    }
    expect((await held(scopeId)).entries).toBe(MAX_ENTRIES);
  });

  it('admits exactly the bytes that fit when writers on two replicas race for the last room', async () => {
    const headers = workflow();
    const scopeId = headers['X-Workflow-ID'];
    // Values that count 700 bytes each with their key: five fit in 4,000, a sixth does not.
    const valueFor = (key: string) => 'z'.repeat(700 - key.length - 2);
    for (const key of ['a0', 'a1']) expect((await set(key, valueFor(key), headers)).status).toBe(200);
    expect(await held(scopeId)).toEqual({ entries: 2, bytes: 1400 });
    const keys = Array.from({ length: 20 }, (_, i) => `b${String(i).padStart(2, '0')}`);
    const answers = await Promise.all(
      keys.map((key, i) => set(key, valueFor(key), headers, i % 2 ? cp : replica)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 409)).toHaveLength(17);
    for (const answer of answers.filter((a) => a.status === 409)) expect(answer.body.bytes).toBe(3500);
    expect(await held(scopeId)).toEqual({ entries: 5, bytes: 3500 });
  });
});
