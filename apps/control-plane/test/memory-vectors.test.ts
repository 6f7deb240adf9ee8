import { MAX_JSON_DEPTH } from '@switchyard/shared';
import { databaseKind, hasPgvector } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryMetrics } from '../src/modules/memory/metrics.ts';
import { GLOBAL_SCOPE_ID, SCOPES, type ScopeRef } from '../src/modules/memory/scopes.ts';
import { encodeEmbedding, insertVectors } from '../src/modules/memory/vector-repository.ts';
import { EXACT_BELOW } from '../src/modules/memory/vector-search.ts';
import { createVectorService } from '../src/modules/memory/vector-service.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { createMetricsRegistry } from '../src/platform/metrics/registry.ts';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';
import { metricValue } from './helpers/metrics.ts';

/**
 * Vector memory: store, read, delete and search embeddings in the memory scopes;
 * both name sets of search and the older write paths of agent SDKs; hostile input refused
 * without changing anything; one dimension per scope instance, also under concurrent writers;
 * and pgvector's HNSW search agreeing with exact search (and with a brute-force oracle here).
 */

let cp: TestControlPlane;
let run = 0;
/** Scope ids of one test: tests never see each other's vectors. */
const ids = () => {
  run += 1;
  return { wf: `wf_v${run}`, sess: `sess_v${run}`, actor: `actor_v${run}` };
};

beforeAll(async () => {
  cp = await startTestControlPlane();
});

afterAll(async () => {
  await cp?.close();
});

type Headers = Record<string, string>;
const post = (path: string, body: unknown, headers: Headers = {}) =>
  call(cp.base, 'POST', path, body, headers);
const store = (body: unknown, headers: Headers = {}) => post('/api/v1/memory/vector', body, headers);
const search = (body: unknown, headers: Headers = {}) => post('/api/v1/memory/vector/search', body, headers);
const get = (key: string, query = '', headers: Headers = {}) =>
  call(cp.base, 'GET', `/api/v1/memory/vector/${encodeURIComponent(key)}${query}`, undefined, headers);
const remove = (key: string, query = '', headers: Headers = {}) =>
  call(cp.base, 'DELETE', `/api/v1/memory/vector/${encodeURIComponent(key)}${query}`, undefined, headers);

/** A deterministic pseudo-random source (mulberry32). */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Gaussian vector of `dims` numbers from a seeded source. */
function gaussian(next: () => number, dims: number): number[] {
  return Array.from({ length: dims }, () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  });
}

const vectorOf = (seed: number, dims: number) => gaussian(random(seed), dims);

/** Every row of memory_vectors, for asserting that a refused request changed nothing. */
async function snapshot() {
  const rows = await cp.handle
    .db('memory_vectors')
    .select('scope', 'scope_id', 'key', 'dimensions', 'updated_at');
  return rows.map((row) => JSON.stringify(row)).sort();
}

describe('POST /api/v1/memory/vector', () => {
  it('stores into global without context headers and answers where and when it wrote', async () => {
    const key = `plain-${ids().wf}`;
    const answer = await store({ key, embedding: [1, 2], metadata: { title: 'Q3' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      key,
      scope: 'global',
      scope_id: GLOBAL_SCOPE_ID,
      dimensions: 2,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const read = await get(key);
    expect(read.body).toMatchObject({ key, embedding: [1, 2], metadata: { title: 'Q3' }, dimensions: 2 });
  });

  it('writes to the most specific scope the headers name, or the named scope', async () => {
    const id = ids();
    const all = { 'X-Workflow-ID': id.wf, 'X-Session-ID': id.sess, 'X-Actor-ID': id.actor };
    expect((await store({ key: 'k', embedding: [1, 0] }, all)).body).toMatchObject({
      scope: 'workflow',
      scope_id: id.wf,
    });
    const { 'X-Workflow-ID': _w, ...noWorkflow } = all;
    expect((await store({ key: 'k', embedding: [1, 0] }, noWorkflow)).body).toMatchObject({
      scope: 'session',
      scope_id: id.sess,
    });
    expect((await store({ key: 'k', embedding: [1, 0] }, { 'X-Actor-ID': id.actor })).body).toMatchObject({
      scope: 'actor',
      scope_id: id.actor,
    });
    expect(
      (await store({ key: 'k', embedding: [1, 0], scope: 'session', scope_id: 'elsewhere' }, all)).body,
    ).toMatchObject({ scope: 'session', scope_id: 'elsewhere' });
    expect((await store({ key: 'k', embedding: [1, 0], scope: 'actor' }, all)).body).toMatchObject({
      scope: 'actor',
      scope_id: id.actor,
    });
    // A named scope without its id has nowhere to go.
    const nowhere = await store({ key: 'k', embedding: [1, 0], scope: 'workflow' });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body.detail).toContain('X-Workflow-ID');
  });

  it('answers the same on the older path agent SDKs use (/vector/set)', async () => {
    const id = ids();
    const answer = await post(
      '/api/v1/memory/vector/set',
      { key: 'sdk', embedding: [0.5, 0.5], scope: 'workflow' },
      {
        'X-Workflow-ID': id.wf,
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ key: 'sdk', scope: 'workflow', scope_id: id.wf, dimensions: 2 });
    expect((await get('sdk', `?scope=workflow&scope_id=${id.wf}`)).body.embedding).toEqual([0.5, 0.5]);
  });

  it('replaces the embedding and metadata of a key and keeps when it was first written', async () => {
    const id = ids();
    const headers = { 'X-Session-ID': id.sess };
    const first = await store({ key: 'doc', embedding: [1, 2], metadata: { v: 1, old: true } }, headers);
    cp.clock.advance(5000);
    const second = await store({ key: 'doc', embedding: [3, 4], metadata: { v: 2 } }, headers);
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(Date.parse(second.body.updated_at) - Date.parse(first.body.created_at)).toBe(5000);
    const read = await get('doc', '', headers);
    expect(read.body).toMatchObject({ embedding: [3, 4], metadata: { v: 2 }, scope: 'session' });
    expect(read.body.metadata).not.toHaveProperty('old');
  });

  it('keeps numbers as float4: what it answers is what a real holds', async () => {
    const headers = { 'X-Actor-ID': ids().actor };
    await store({ key: 'float', embedding: [0.1, 1 / 3, 1e-50, -2.5, 16777217] }, headers);
    const read = await get('float', '', headers);
    // 1e-50 is below float4's range: it becomes 0, as `real` would have it (and not a 500).
    expect(read.body.embedding).toEqual([0.1, 0.33333334, 0, -2.5, 16777216]);
  });

  it.each([
    ['a number as a string', ['NaN', 1], 'embedding[0]'],
    ['null inside', [1, null, 2], 'embedding[1]'],
    [
      'nested arrays',
      [
        [1, 2],
        [3, 4],
      ],
      'embedding[0]',
    ],
    ['a number beyond float4', [1, 1e39], 'embedding[1]'],
    ['no numbers', [], 'embedding'],
    ['not an array', 'abc', 'embedding'],
    ['only zeros', [0, 0, -0, 0], 'embedding'],
    ['numbers too small for a float4 (zeros as stored)', [1e-50, -1e-60], 'embedding'],
    ['more numbers than memory.max_vector_dimensions', new Array(4097).fill(1), 'embedding'],
    // Regression: pgvector compares in 4-byte floats, where the squares of these overflow or
    // vanish: HNSW and its exact comparison ranked [1e20, 1e19] last for a query along it, while
    // exact search (in doubles) ranked it first.
    ['a length beyond 1e15', [1e20, 1e19], 'embedding'],
    ['a length below 1e-15', [1e-25, -1e-26], 'embedding'],
  ])('refuses an embedding with %s (400 naming %s) and stores nothing', async (_, embedding, field) => {
    const before = await snapshot();
    const key = `bad-${ids().wf}`;
    const answer = await store({ key, embedding });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.errors).toEqual([{ field: field as string, message: expect.any(String) }]);
    expect(await snapshot()).toEqual(before);
    expect((await get(key)).status).toBe(404);
  });

  it('accepts exactly memory.max_vector_dimensions numbers', async () => {
    const answer = await store({
      key: `wide-${ids().wf}`,
      embedding: vectorOf(1, 4096),
      scope: 'actor',
      scope_id: 'wide',
    });
    expect(answer.body).toMatchObject({ dimensions: 4096 });
  });

  it('answers 409 for another dimension than the scope holds, naming both, and changes nothing', async () => {
    const id = ids();
    const headers = { 'X-Workflow-ID': id.wf };
    await store({ key: 'a', embedding: vectorOf(2, 384) }, headers);
    await store({ key: 'b', embedding: vectorOf(3, 384) }, headers);
    const before = await snapshot();
    const clash = await store({ key: 'c', embedding: [1, 2, 3] }, headers);
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('conflict');
    expect(clash.body.detail).toContain('384 dimensions');
    expect(clash.body.detail).toContain('has 3');
    // Replacing one of two keys with another dimension is a clash too.
    expect((await store({ key: 'a', embedding: [1, 2, 3] }, headers)).status).toBe(409);
    expect(await snapshot()).toEqual(before);
    // Other scopes are other instances: the same vector is fine in the session scope.
    expect(
      (await store({ key: 'c', embedding: [1, 2, 3], scope: 'session', scope_id: id.sess })).status,
    ).toBe(200);
  });

  it("replaces a key's only vector with another dimension", async () => {
    const headers = { 'X-Actor-ID': ids().actor };
    await store({ key: 'only', embedding: [1, 2, 3] }, headers);
    const changed = await store({ key: 'only', embedding: [1, 2, 3, 4, 5] }, headers);
    expect(changed.body).toMatchObject({ dimensions: 5 });
    expect((await get('only', '', headers)).body.embedding).toEqual([1, 2, 3, 4, 5]);
  });

  it('lets exactly one of two concurrent writers of different dimensions into an empty scope', async () => {
    for (let round = 0; round < 8; round++) {
      const headers = { 'X-Workflow-ID': ids().wf };
      const answers = await Promise.all([
        store({ key: 'three', embedding: [1, 2, 3] }, headers),
        store({ key: 'five', embedding: [1, 2, 3, 4, 5] }, headers),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      const winner = answers[0]!.status === 200 ? 'three' : 'five';
      const loser = winner === 'three' ? 'five' : 'three';
      expect((await get(winner, '', headers)).status).toBe(200);
      expect((await get(loser, '', headers)).status).toBe(404);
    }
  });

  it('refuses metadata over 64 KiB with 413 and stores nothing', async () => {
    const before = await snapshot();
    const key = `big-${ids().wf}`;
    const answer = await store({ key, embedding: [1, 2], metadata: { text: 'x'.repeat(64 * 1024) } });
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('payload_too_large');
    expect(await snapshot()).toEqual(before);
    // Just under the limit is fine: {"text":"…"} is 11 bytes around the string.
    const fits = await store({ key, embedding: [1, 2], metadata: { text: 'x'.repeat(64 * 1024 - 11) } });
    expect(fits.status).toBe(200);
  });

  it.each([
    ['an array', [1, 2], 'metadata'],
    ['a string', 'title', 'metadata'],
    ['a NUL character', { note: 'a\u0000b' }, 'metadata.note'],
    ['a lone surrogate in a member name', { 'x\ud800': 1 }, 'metadata["x\\ud800"]'],
  ])('refuses metadata that is %s (400 naming the field)', async (_, metadata, field) => {
    const before = await snapshot();
    const answer = await store({ key: `meta-${ids().wf}`, embedding: [1, 2], metadata });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field, message: expect.any(String) }]);
    expect(await snapshot()).toEqual(before);
  });

  // SDKs serialize unset members as null (as registration found, 95e1afb): null reads as absent.
  it('reads null optional members (metadata, scope, scope_id, top_k, threshold, filters) as absent', async () => {
    const wf = ids().wf;
    const headers = { 'X-Workflow-ID': wf };
    const stored = await store(
      { key: 'nulls', embedding: [1, 2], metadata: null, scope: null, scope_id: null },
      headers,
    );
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ scope: 'workflow', scope_id: wf });
    const read = await call(cp.base, 'GET', '/api/v1/memory/vector/nulls', undefined, headers);
    expect(read.body.metadata).toEqual({});
    for (const body of [
      { query_embedding: [1, 2], top_k: null, threshold: null, filters: null, scope: null, scope_id: null },
      { embedding: [1, 2], limit: null, min_score: null },
    ]) {
      const found = await call(cp.base, 'POST', '/api/v1/memory/vector/search', body, headers);
      expect(found.status).toBe(200);
      // The workflow's vector, and any 2-dimension vectors other tests left in global.
      expect(found.body.results).toContainEqual(expect.objectContaining({ key: 'nulls', scope: 'workflow' }));
    }
  });

  // Regression: 1e400 parsed as Infinity and was stored as null (a filter on it then looked for null).
  it('refuses metadata and filters with a number beyond double precision', async () => {
    const headers = { 'X-Workflow-ID': ids().wf };
    const before = await snapshot();
    const stored = await store('{"key":"inf","embedding":[1,2],"metadata":{"n":1e400}}', headers);
    expect(stored.status).toBe(400);
    expect(stored.body.errors).toEqual([{ field: 'metadata.n', message: expect.any(String) }]);
    expect(await snapshot()).toEqual(before);
    await store({ key: 'null', embedding: [1, 2], metadata: { n: null } }, headers);
    const filtered = await search('{"query_embedding":[1,2],"filters":{"n":1e400}}', headers);
    expect(filtered.status).toBe(400);
    expect(filtered.body.errors).toEqual([{ field: 'filters.n', message: expect.any(String) }]);
  });

  // Regression: zod's record rebuilt the object and dropped a "__proto__" member on the way.
  it('keeps a "__proto__" member of metadata as the plain key it is in JSON', async () => {
    const headers = { 'X-Workflow-ID': ids().wf };
    const body = '{"key":"proto","embedding":[1,2],"metadata":{"__proto__":{"x":1},"b":2}}';
    expect((await store(body, headers)).status).toBe(200);
    const read = await get('proto', '', headers);
    expect(read.body.metadata).toEqual(JSON.parse('{"__proto__":{"x":1},"b":2}'));
    expect(Object.keys(read.body.metadata)).toEqual(['b', '__proto__']);
  });

  it.each([
    ['a control character', 'a\u0001b'],
    ['a line feed', 'line\nfeed'],
    ['256 characters', 'k'.repeat(256)],
    ['nothing', ''],
    ['a number', 42],
  ])('refuses a key with %s in the body', async (_, key) => {
    const before = await snapshot();
    const answer = await store({ key, embedding: [1, 2] });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'key', message: expect.any(String) }]);
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['255 characters', 'k'.repeat(255)],
    ['a slash', 'docs/2026/q3'],
    ['unicode', 'résumé-文書-🚀'],
    ['SQL', "x'); drop table memory_vectors; --"],
    ['percent signs', '100%25 sure %2F'],
  ])('stores, reads and deletes a key with %s (through the path too)', async (_, key) => {
    const headers = { 'X-Session-ID': ids().sess };
    expect((await store({ key, embedding: [3, 4] }, headers)).body).toMatchObject({ key });
    const read = await get(key, '', headers);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ key, embedding: [3, 4] });
    expect((await remove(key, '', headers)).body).toMatchObject({ key, deleted: true });
    expect((await get(key, '', headers)).status).toBe(404);
  });

  it('refuses missing, malformed, non-JSON and too deeply nested bodies', async () => {
    const before = await snapshot();
    for (const body of [undefined, '{"key": "k", "embedding": [1,', '[]', 'null']) {
      const answer = await store(body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
    }
    const text = await call(cp.base, 'POST', '/api/v1/memory/vector', '{"key":"k"}', {
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(400);
    let nested: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) nested = { deeper: nested };
    const deep = await store({ key: 'deep', embedding: [1, 2], metadata: nested });
    expect(deep.status).toBe(400);
    expect(deep.body.errors).toEqual([{ field: '(body)', message: expect.stringContaining('nested') }]);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a malformed context header or scope_id', async () => {
    expect((await store({ key: 'h', embedding: [1, 2] }, { 'X-Workflow-ID': 'é' })).status).toBe(400);
    expect((await store({ key: 'h', embedding: [1, 2], scope: 'workflow', scope_id: 'a\tb' })).status).toBe(
      400,
    );
    expect((await store({ key: 'h', embedding: [1, 2], scope_id: 'x' })).status).toBe(400);
    expect((await store({ key: 'h', embedding: [1, 2], scope: 'tenant' })).status).toBe(400);
  });
});

describe('GET /api/v1/memory/vector/{key}', () => {
  it('reads workflow, session, actor, then global, and says where the vector came from', async () => {
    const id = ids();
    const key = `layered-${id.wf}`;
    const all = { 'X-Workflow-ID': id.wf, 'X-Session-ID': id.sess, 'X-Actor-ID': id.actor };
    await store({ key, embedding: [4, 0] });
    expect((await get(key, '', all)).body).toMatchObject({ scope: 'global', embedding: [4, 0] });
    await store({ key, embedding: [3, 0], scope: 'actor' }, all);
    expect((await get(key, '', all)).body).toMatchObject({ scope: 'actor', scope_id: id.actor });
    await store({ key, embedding: [2, 0], scope: 'session' }, all);
    expect((await get(key, '', all)).body).toMatchObject({ scope: 'session', embedding: [2, 0] });
    await store({ key, embedding: [1, 0] }, all);
    expect((await get(key, '', all)).body).toMatchObject({ scope: 'workflow', embedding: [1, 0] });
    // A named scope is read alone.
    expect((await get(key, '?scope=global', all)).body).toMatchObject({ scope: 'global', embedding: [4, 0] });
    expect((await get(key, `?scope=actor&scope_id=${id.actor}`)).body).toMatchObject({ embedding: [3, 0] });
    // Another workflow sees only global.
    expect((await get(key, '', { 'X-Workflow-ID': `${id.wf}-other` })).body).toMatchObject({
      scope: 'global',
    });
  });

  it('answers 404 naming the missing header when the named scope has no id', async () => {
    const answer = await get(`x-${ids().wf}`, '?scope=session');
    expect(answer.status).toBe(404);
    expect(answer.body.detail).toContain('X-Session-ID');
  });

  it('answers 404 for a key in none of the scopes searched', async () => {
    const id = ids();
    await store({ key: 'mine', embedding: [1, 1] }, { 'X-Workflow-ID': id.wf });
    const answer = await get('mine', '', { 'X-Workflow-ID': `${id.wf}-other` });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('not_found');
    expect(answer.body.detail).toBe('No vector "mine" in the workflow and global scopes.');
  });

  it.each([
    ['a control character', '%01'],
    ['NUL', 'a%00b'],
    ['256 characters', 'k'.repeat(256)],
  ])('answers 400 for a path key with %s', async (_, path) => {
    const answer = await call(cp.base, 'GET', `/api/v1/memory/vector/${path}`);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'key', message: expect.any(String) }]);
    const removed = await call(cp.base, 'DELETE', `/api/v1/memory/vector/${path}`);
    expect(removed.status).toBe(400);
  });

  it('answers 400 for a bad or repeated scope in the query', async () => {
    expect((await get('k', '?scope=tenant')).status).toBe(400);
    expect((await get('k', '?scope=global&scope=actor')).status).toBe(400);
    expect((await get('k', '?scope=global&scope_id=other')).status).toBe(400);
  });
});

describe('DELETE /api/v1/memory/vector/{key} and POST /api/v1/memory/vector/delete', () => {
  it('deletes from the write scope only and says whether there was a vector', async () => {
    const id = ids();
    const headers = { 'X-Workflow-ID': id.wf };
    await store({ key: 'gone', embedding: [1, 2] }, headers);
    await store({ key: 'gone', embedding: [9, 9], scope: 'global' });
    expect((await remove('gone', '', headers)).body).toEqual({
      key: 'gone',
      scope: 'workflow',
      scope_id: id.wf,
      deleted: true,
    });
    expect((await remove('gone', '', headers)).body).toMatchObject({ deleted: false });
    // The global vector is still there, and now what the workflow reads.
    expect((await get('gone', '', headers)).body).toMatchObject({ scope: 'global', embedding: [9, 9] });
    expect((await remove('gone', '?scope=global')).body).toMatchObject({ scope: 'global', deleted: true });
  });

  it('deletes through the older body path with the same answers', async () => {
    const id = ids();
    const headers = { 'X-Session-ID': id.sess };
    await store({ key: 'old', embedding: [1, 2] }, headers);
    const answer = await post('/api/v1/memory/vector/delete', { key: 'old', scope: 'session' }, headers);
    expect(answer.body).toEqual({ key: 'old', scope: 'session', scope_id: id.sess, deleted: true });
    expect((await post('/api/v1/memory/vector/delete', { key: 'old' }, headers)).body.deleted).toBe(false);
    expect(
      (await post('/api/v1/memory/vector/delete', { key: 'old', scope: 'workflow' }, headers)).status,
    ).toBe(400);
    expect((await post('/api/v1/memory/vector/delete', { scope: 'session' }, headers)).status).toBe(400);
  });
});

describe('POST /api/v1/memory/vector/search', () => {
  /** Stores `vectors` (key → embedding, metadata) under the headers; returns the headers. */
  async function fill(headers: Headers, vectors: Record<string, [number[], Record<string, unknown>?]>) {
    for (const [key, [embedding, metadata]] of Object.entries(vectors)) {
      expect((await store({ key, embedding, metadata }, headers)).status).toBe(200);
    }
  }

  it('finds the most similar vectors first, with cosine scores', async () => {
    const headers = { 'X-Workflow-ID': ids().wf };
    await fill(headers, {
      east: [[1, 0, 0], { dir: 'e' }],
      north: [[0, 1, 0]],
      northeast: [[1, 1, 0]],
      west: [[-2, 0, 0]],
    });
    const answer = await search({ query_embedding: [2, 0.1, 0], top_k: 4, scope: 'workflow' }, headers);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const results = answer.body.results;
    expect(results.map((r: { key: string }) => r.key)).toEqual(['east', 'northeast', 'north', 'west']);
    expect(results[0]).toEqual({
      key: 'east',
      score: expect.closeTo(2 / Math.hypot(2, 0.1), 6),
      metadata: { dir: 'e' },
      scope: 'workflow',
      scope_id: headers['X-Workflow-ID'],
    });
    expect(results[3].score).toBeCloseTo(-2 / Math.hypot(2, 0.1), 6);
    expect(results[2].metadata).toEqual({});
  });

  it('accepts the other name set (embedding, limit, min_score), with the same answers', async () => {
    const headers = { 'X-Workflow-ID': ids().wf };
    await fill(headers, { a: [[1, 0]], b: [[1, 1]], c: [[0, 1]], d: [[-1, 0]] });
    const sdk = await search(
      { query_embedding: [1, 0.2], top_k: 2, threshold: 0.5, scope: 'workflow' },
      headers,
    );
    const other = await search({ embedding: [1, 0.2], limit: 2, min_score: 0.5, scope: 'workflow' }, headers);
    expect(sdk.body).toEqual(other.body);
    expect(sdk.body.results.map((r: { key: string }) => r.key)).toEqual(['a', 'b']);
  });

  it.each([
    [{ query_embedding: [1, 0], limit: 2 }, 'limit'],
    [{ embedding: [1, 0], top_k: 2 }, 'embedding'],
    [{ query_embedding: [1, 0], embedding: [1, 0] }, 'embedding'],
    [{ embedding: [1, 0], threshold: 0.1 }, 'embedding'],
  ])('answers 400 for a body mixing the two name sets (%j)', async (body, field) => {
    const answer = await search(body);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toContainEqual({
      field,
      message: expect.stringContaining('mixes the two name sets'),
    });
  });

  it.each([
    [{}, 'query_embedding'],
    [{ top_k: 3 }, 'query_embedding'],
    [{ limit: 3 }, 'embedding'],
    [{ query_embedding: [0, 0] }, 'query_embedding'],
    [{ query_embedding: [3e38, 1] }, 'query_embedding'],
    [{ embedding: ['1', 2] }, 'embedding[0]'],
    [{ query_embedding: [1, 0], top_k: 0 }, 'top_k'],
    [{ query_embedding: [1, 0], top_k: 101 }, 'top_k'],
    [{ query_embedding: [1, 0], top_k: 2.5 }, 'top_k'],
    [{ embedding: [1, 0], limit: '5' }, 'limit'],
    [{ query_embedding: [1, 0], threshold: 1.5 }, 'threshold'],
    [{ embedding: [1, 0], min_score: -2 }, 'min_score'],
    [{ query_embedding: [1, 0], filters: [1] }, 'filters'],
    [{ query_embedding: [1, 0], filters: { a: 'x\u0000' } }, 'filters.a'],
    [{ query_embedding: [1, 0], scope: 'session' }, 'scope'],
  ])('answers 400 for %j, naming %s', async (body, field) => {
    const answer = await search(body);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toContainEqual({ field, message: expect.any(String) });
  });

  it('returns top_k results (10 by default) and drops those under the threshold', async () => {
    const headers = { 'X-Session-ID': ids().sess };
    const vectors: Record<string, [number[]]> = {};
    for (let i = 0; i < 15; i++)
      vectors[`v${String(i).padStart(2, '0')}`] = [[Math.cos(i / 5), Math.sin(i / 5)]];
    await fill(headers, vectors);
    const scoped = { scope: 'session' };
    expect((await search({ query_embedding: [1, 0], ...scoped }, headers)).body.results).toHaveLength(10);
    const three = (await search({ query_embedding: [1, 0], top_k: 3, ...scoped }, headers)).body.results;
    expect(three.map((r: { key: string }) => r.key)).toEqual(['v00', 'v01', 'v02']);
    const above = (
      await search({ query_embedding: [1, 0], top_k: 100, threshold: Math.cos(1.1), ...scoped }, headers)
    ).body.results;
    // cos(i/5) ≥ cos(1.1) for i ≤ 5.
    expect(above.map((r: { key: string }) => r.key)).toEqual(['v00', 'v01', 'v02', 'v03', 'v04', 'v05']);
    const all = (await search({ query_embedding: [1, 0], top_k: 100, threshold: -1, ...scoped }, headers))
      .body.results;
    expect(all).toHaveLength(15);
    for (let i = 1; i < all.length; i++) expect(all[i - 1].score).toBeGreaterThanOrEqual(all[i].score);
  });

  it('matches metadata by containment', async () => {
    const headers = { 'X-Actor-ID': ids().actor };
    await fill(headers, {
      fin1: [[1, 0], { source: 'finance', tags: ['q3', 'board'], year: 2026 }],
      fin2: [[0, 1], { source: 'finance', tags: ['q4'] }],
      ops: [[1, 0.1], { source: 'ops', nested: { team: 'red' } }],
    });
    const keys = async (filters: unknown) =>
      (await search({ query_embedding: [1, 0], filters, scope: 'actor' }, headers)).body.results.map(
        (r: { key: string }) => r.key,
      );
    expect(await keys({ source: 'finance' })).toEqual(['fin1', 'fin2']);
    expect(await keys({ tags: ['q3'] })).toEqual(['fin1']);
    expect(await keys({ source: 'finance', year: 2026 })).toEqual(['fin1']);
    expect(await keys({ nested: { team: 'red' } })).toEqual(['ops']);
    expect(await keys({ source: 'legal' })).toEqual([]);
    expect(await keys({})).toEqual(['fin1', 'ops', 'fin2']);
  });

  // Regression: a filter member named "__proto__" was dropped, so the filter matched everything.
  it('filters on a "__proto__" member like on any other', async () => {
    const headers = { 'X-Actor-ID': ids().actor };
    await store('{"key":"with","embedding":[1,0],"metadata":{"__proto__":{"x":1}}}', headers);
    await store({ key: 'without', embedding: [1, 0.1], metadata: { other: 1 } }, headers);
    const answer = await search(
      '{"query_embedding":[1,0],"scope":"actor","filters":{"__proto__":{"x":1}}}',
      headers,
    );
    expect(answer.body.results.map((r: { key: string }) => r.key)).toEqual(['with']);
  });

  it("searches the headers' scopes plus global, merged by score, and only them", async () => {
    const id = ids();
    const mine = { 'X-Workflow-ID': id.wf, 'X-Session-ID': id.sess };
    // Global is one scope instance for the whole file: a tag of this test keeps the others out.
    const tag = { test: id.wf };
    const q = { query_embedding: [1, 0], filters: tag };
    await store({ key: 'in-workflow', embedding: [1, 0.1], metadata: tag }, mine);
    await store({ key: 'in-session', embedding: [1, 0.2], metadata: tag, scope: 'session' }, mine);
    await store({ key: `in-global-${id.wf}`, embedding: [1, 0.3], metadata: tag, scope: 'global' });
    await store(
      { key: 'other-workflow', embedding: [1, 0], metadata: tag },
      { 'X-Workflow-ID': `${id.wf}-x` },
    );
    await store({ key: 'in-actor', embedding: [1, 0], metadata: tag, scope: 'actor', scope_id: id.actor });
    const merged = (await search(q, mine)).body.results;
    expect(merged.map((r: { key: string; scope: string }) => `${r.scope}:${r.key}`)).toEqual([
      'workflow:in-workflow',
      'session:in-session',
      `global:in-global-${id.wf}`,
    ]);
    const onlySession = (await search({ ...q, scope: 'session' }, mine)).body.results;
    expect(onlySession.map((r: { key: string }) => r.key)).toEqual(['in-session']);
    const named = (await search({ ...q, scope: 'actor', scope_id: id.actor })).body.results;
    expect(named.map((r: { key: string }) => r.key)).toEqual(['in-actor']);
    const globalOnly = (await search(q)).body.results;
    expect(globalOnly.map((r: { key: string }) => r.key)).toEqual([`in-global-${id.wf}`]);
  });

  it('breaks ties by scope precedence, then key', async () => {
    const id = ids();
    const all = { 'X-Workflow-ID': id.wf, 'X-Session-ID': id.sess, 'X-Actor-ID': id.actor };
    const same = [0.6, 0.8];
    const tag = { test: id.wf };
    for (const scope of ['global', 'actor', 'session', 'workflow']) {
      for (const key of [`b-${id.wf}`, `a-${id.wf}`, `B-${id.wf}`]) {
        await store({ key, embedding: same, metadata: tag, scope }, all);
      }
    }
    const results = (await search({ query_embedding: same, top_k: 12, filters: tag }, all)).body.results;
    expect(results.map((r: { key: string; scope: string }) => `${r.scope}:${r.key.slice(0, 1)}`)).toEqual(
      SCOPES.flatMap((scope) => ['B', 'a', 'b'].map((k) => `${scope}:${k}`)),
    );
    expect(new Set(results.map((r: { score: number }) => r.score)).size).toBe(1);
  });

  it('compares only vectors with as many dimensions as the query', async () => {
    const id = ids();
    await store({ key: 'two', embedding: [1, 0] }, { 'X-Workflow-ID': id.wf });
    await store({ key: 'three', embedding: [1, 0, 0] }, { 'X-Session-ID': id.sess });
    const headers = { 'X-Workflow-ID': id.wf, 'X-Session-ID': id.sess };
    const three = (await search({ query_embedding: [1, 0, 0], top_k: 100 }, headers)).body.results;
    expect(
      three.filter((r: { scope: string }) => r.scope !== 'global').map((r: { key: string }) => r.key),
    ).toEqual(['three']);
    const nine = (await search({ query_embedding: [1, 0, 0, 0, 0, 0, 0, 0, 0.5] }, headers)).body.results;
    expect(nine).toEqual([]);
  });
});

/**
 * What an agent built with the platform's TypeScript SDK (0.1.128-rc.3) sent, recorded on the wire:
 * its `searchVector()` is typed as returning the body as a bare array and reads `key`, `scope`,
 * `scope_id`, `score` and `metadata` of each element. See /docs/concepts/vector-memory#agents-built-with-the-sdks.
 */
const SDK_HEADERS = {
  accept: 'application/json, text/plain, */*',
  'x-workflow-id': 'run_97dc5cfc36ad4ba4',
  'x-session-id': 'sess-9',
  'x-actor-id': 'actor-9',
  'x-run-id': 'run_97dc5cfc36ad4ba4',
  'x-execution-id': 'exec_0aa8d8d1a1144c90',
  'x-agent-node-id': 'sdk-harness',
  'user-agent': 'axios/1.x',
};
const SDK_WRITES = [
  {
    key: 'doc-1',
    embedding: [0.1, 0.2, 0.3],
    metadata: { title: 'Doc 1', content: 'hello' },
    scope: 'workflow',
  },
  { key: 'doc-2', embedding: [0.3, 0.2, 0.1], metadata: { title: 'Doc 2' }, scope: 'workflow' },
];
const SDK_SEARCH = { query_embedding: [0.1, 0.2, 0.3], top_k: 2 };

describe('POST /api/v1/memory/vector/search answer shape (memory.vector_search_response)', () => {
  let bare: TestControlPlane;

  beforeAll(async () => {
    bare = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.memory.vectorSearchResponse = 'array';
      },
    });
  });

  afterAll(async () => {
    await bare?.close();
  });

  const searchOn = (server: TestControlPlane, body: unknown, headers: Headers) =>
    call(server.base, 'POST', '/api/v1/memory/vector/search', body, headers);

  it('answers an object with results by default, and the bare array of the same results with array', async () => {
    const headers = { 'X-Workflow-ID': ids().wf };
    for (const [key, embedding] of [
      ['near', [1, 0.1]],
      ['mid', [1, 1]],
      ['far', [-1, 0.2]],
    ] as const) {
      expect((await store({ key, embedding, metadata: { key } }, headers)).status).toBe(200);
    }
    const body = { query_embedding: [1, 0], top_k: 3, scope: 'workflow' };
    const object = await searchOn(cp, body, headers);
    expect(object.status).toBe(200);
    expect(Object.keys(object.body)).toEqual(['results']);
    expect(object.body.results.map((r: { key: string }) => r.key)).toEqual(['near', 'mid', 'far']);

    const array = await searchOn(bare, body, headers);
    expect(array.status).toBe(200);
    expect(array.headers.get('cache-control')).toBe('no-store');
    expect(array.body).toEqual(object.body.results);
  });

  it('answers an empty array, not an object, when nothing matches', async () => {
    const headers = { 'X-Workflow-ID': ids().wf };
    const body = { query_embedding: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0.25], scope: 'workflow' };
    expect((await searchOn(cp, body, headers)).body).toEqual({ results: [] });
    expect((await searchOn(bare, body, headers)).body).toEqual([]);
  });

  it('answers the recorded SDK search in both shapes, with what the SDK reads of each result', async () => {
    for (const write of SDK_WRITES) {
      expect((await post('/api/v1/memory/vector/set', write, SDK_HEADERS)).status).toBe(200);
    }
    const expected = [
      {
        key: 'doc-1',
        scope: 'workflow',
        scope_id: 'run_97dc5cfc36ad4ba4',
        score: expect.closeTo(1, 6),
        metadata: { title: 'Doc 1', content: 'hello' },
      },
      {
        key: 'doc-2',
        scope: 'workflow',
        scope_id: 'run_97dc5cfc36ad4ba4',
        score: expect.closeTo(0.7142857142857143, 6),
        metadata: { title: 'Doc 2' },
      },
    ];
    const object = await searchOn(cp, SDK_SEARCH, SDK_HEADERS);
    expect(object.status).toBe(200);
    expect(object.body).toEqual({ results: expected });
    const array = await searchOn(bare, SDK_SEARCH, SDK_HEADERS);
    expect(array.status).toBe(200);
    expect(array.body).toEqual(expected);
  });

  it('answers refused searches with the same problem documents in both shapes', async () => {
    const answer = await searchOn(bare, { query_embedding: [0, 0] }, {});
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body.errors).toContainEqual({ field: 'query_embedding', message: expect.any(String) });
  });
});

describe('authentication and metrics', () => {
  it('answers 401 on every vector route without the API key when one is set', async () => {
    const secured = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.api.auth = { apiKey: 'vector-key', skipPaths: [] };
      },
    });
    try {
      const routes: Array<[string, string, unknown]> = [
        ['POST', '/api/v1/memory/vector', { key: 'auth', embedding: [1, 2] }],
        ['POST', '/api/v1/memory/vector/set', { key: 'auth', embedding: [1, 2] }],
        ['GET', '/api/v1/memory/vector/auth', undefined],
        ['DELETE', '/api/v1/memory/vector/auth', undefined],
        ['POST', '/api/v1/memory/vector/delete', { key: 'auth' }],
        ['POST', '/api/v1/memory/vector/search', { query_embedding: [1, 2] }],
      ];
      for (const [method, path, body] of routes) {
        expect((await call(secured.base, method, path, body)).status).toBe(401);
        const keyed = await call(secured.base, method, path, body, { 'X-API-Key': 'vector-key' });
        expect(keyed.status).toBe(200);
      }
    } finally {
      await secured.close();
    }
  });

  it('counts operations by type and scope', async () => {
    const id = ids();
    const value = (type: string, scope: string) =>
      metricValue(cp.metrics, 'service_memory_operations_total', { type, scope });
    const before = {
      set: await value('vector_set', 'workflow'),
      hit: await value('vector_get', 'global'),
      miss: await value('vector_get', 'none'),
      del: await value('vector_delete', 'workflow'),
      any: await value('vector_search', 'any'),
      one: await value('vector_search', 'workflow'),
      bad: await value('vector_set', 'global'),
    };
    const headers = { 'X-Workflow-ID': id.wf };
    await store({ key: 'm', embedding: [1, 2] }, headers);
    await store({ key: 'm2', embedding: [1, 2] }, headers);
    await store({ key: `m-${id.wf}`, embedding: [1, 2], scope: 'global' });
    await store({ key: 'refused', embedding: [] });
    await get(`m-${id.wf}`, '', headers);
    await get('nothing-here', '', headers);
    await remove('m', '', headers);
    await search({ query_embedding: [1, 2] }, headers);
    await search({ query_embedding: [1, 2], scope: 'workflow' }, headers);
    expect(await value('vector_set', 'workflow')).toBe(before.set + 2);
    expect(await value('vector_set', 'global')).toBe(before.bad + 1);
    expect(await value('vector_get', 'global')).toBe(before.hit + 1);
    expect(await value('vector_get', 'none')).toBe(before.miss + 1);
    expect(await value('vector_delete', 'workflow')).toBe(before.del + 1);
    expect(await value('vector_search', 'any')).toBe(before.any + 1);
    expect(await value('vector_search', 'workflow')).toBe(before.one + 1);
  });
});

describe('search engines', () => {
  const DIMS = 16;
  /** Above EXACT_BELOW in global, so searches there walk the HNSW graph where pgvector exists. */
  const GLOBAL_VECTORS = EXACT_BELOW + 400;
  const wf: ScopeRef = { scope: 'workflow', scopeId: 'wf-engines' };
  const sess: ScopeRef = { scope: 'session', scopeId: 'sess-engines' };
  /** Searches with pgvector where the database has it (auto), on a database of its own. */
  let auto: TestControlPlane;
  /** The same database, always searching exactly. */
  let exact: TestControlPlane;
  /** key → rounded embedding and metadata, for the brute-force oracle. */
  const stored: Array<ScopeRef & { key: string; embedding: number[]; metadata: Record<string, unknown> }> =
    [];

  beforeAll(async () => {
    // A database of its own: global is one scope instance, so it holds one dimension.
    auto = await startTestControlPlane({
      config: (config) => {
        // These tests hold the engines to the oracle, not the graph to a recall: a wide beam makes
        // a miss of the approximate search practically impossible (the bench measures recall).
        config.memory.vectorEfSearch = 1000;
      },
    });
    exact = await startTestControlPlane({
      handle: auto.handle,
      config: (config) => {
        config.memory.vectorSearch = 'exact';
      },
    });
    const next = random(20261122);
    // Gaussian clusters: neighbours are close to their centroid and far from most others.
    const centroids = Array.from({ length: 24 }, () => gaussian(next, DIMS));
    const place = (ref: ScopeRef, key: string, i: number) => {
      const centroid = centroids[i % centroids.length] as number[];
      const embedding = gaussian(next, DIMS).map((x, d) => (centroid[d] as number) + 0.35 * x);
      const metadata = { group: i % 5, parity: i % 2 === 0 ? 'even' : 'odd', kind: 'doc' };
      stored.push({ ...ref, key, embedding: embedding.map((x) => Math.fround(x)), metadata });
      return { ref, key, embedding: encodeEmbedding(embedding), metadata: JSON.stringify(metadata) };
    };
    // The first vector goes through the API, which creates the dimension's HNSW index (pgvector);
    // the rest is loaded in bulk and indexed as it is inserted.
    const first = place({ scope: 'global', scopeId: GLOBAL_SCOPE_ID }, 'g-0000', 0);
    const answer = await call(auto.base, 'POST', '/api/v1/memory/vector', {
      key: first.key,
      embedding: stored[0]!.embedding,
      metadata: stored[0]!.metadata,
    });
    expect(answer.status).toBe(200);
    const rows = [];
    for (let i = 1; i < GLOBAL_VECTORS; i++) {
      rows.push(place({ scope: 'global', scopeId: GLOBAL_SCOPE_ID }, `g-${String(i).padStart(4, '0')}`, i));
    }
    for (let i = 0; i < 150; i++) rows.push(place(wf, `w-${String(i).padStart(3, '0')}`, i));
    for (let i = 0; i < 60; i++) rows.push(place(sess, `s-${String(i).padStart(3, '0')}`, i));
    for (let i = 0; i < rows.length; i += 500)
      await insertVectors(auto.handle.db, rows.slice(i, i + 500), new Date());
  }, 60_000);

  afterAll(async () => {
    await exact?.close();
    await auto?.close();
  });

  /** Exact cosine search in JS over what was stored: the oracle both engines must agree with. */
  function oracle(query: number[], refs: ScopeRef[], topK: number, filters?: Record<string, unknown>) {
    const q = query.map((x) => Math.fround(x));
    const qNorm = Math.hypot(...q);
    const inScope = (v: ScopeRef) => refs.some((r) => r.scope === v.scope && r.scopeId === v.scopeId);
    const matches = (m: Record<string, unknown>) =>
      Object.entries(filters ?? {}).every(([k, v]) => m[k] === v);
    return stored
      .filter((v) => inScope(v) && matches(v.metadata))
      .map((v) => {
        let dot = 0;
        for (let i = 0; i < q.length; i++) dot += (q[i] as number) * (v.embedding[i] as number);
        return { key: v.key, scope: v.scope, score: dot / (Math.hypot(...v.embedding) * qNorm) };
      })
      .sort(
        (a, b) =>
          b.score - a.score || SCOPES.indexOf(a.scope) - SCOPES.indexOf(b.scope) || (a.key < b.key ? -1 : 1),
      )
      .slice(0, topK);
  }

  const GLOBAL: ScopeRef = { scope: 'global', scopeId: GLOBAL_SCOPE_ID };
  const cases: Array<{ name: string; body: Record<string, unknown>; headers?: Headers; refs: ScopeRef[] }> =
    [];
  for (let i = 0; i < 8; i++) cases.push({ name: `global ${i}`, body: { top_k: 10 }, refs: [GLOBAL] });
  cases.push({ name: 'global, top 50', body: { top_k: 50 }, refs: [GLOBAL] });
  cases.push({ name: 'global, top 1', body: { top_k: 1 }, refs: [GLOBAL] });
  cases.push({ name: 'global, filtered', body: { top_k: 10, filters: { group: 2 } }, refs: [GLOBAL] });
  // Matches every vector: too many to compare them all, so the graph is walked with the filter.
  cases.push({ name: 'global, broad filter', body: { top_k: 10, filters: { kind: 'doc' } }, refs: [GLOBAL] });
  cases.push({
    name: 'global, two filters',
    body: { top_k: 20, filters: { group: 3, parity: 'odd' } },
    refs: [GLOBAL],
  });
  cases.push({
    name: 'headers: workflow, session and global',
    body: { top_k: 15 },
    headers: { 'X-Workflow-ID': wf.scopeId, 'X-Session-ID': sess.scopeId },
    refs: [wf, sess, GLOBAL],
  });
  cases.push({
    name: 'workflow only, filtered',
    body: { top_k: 10, scope: 'workflow', scope_id: wf.scopeId, filters: { parity: 'even' } },
    refs: [wf],
  });
  cases.push({
    name: 'session only',
    body: { top_k: 100, scope: 'session', scope_id: sess.scopeId },
    refs: [sess],
  });

  it.each(cases.map((c, i) => [c.name, c, i] as const))(
    'agree with each other and the oracle: %s',
    async (_, c, i) => {
      const query = gaussian(random(1000 + i), DIMS);
      const body = { query_embedding: query, ...c.body };
      const [approximate, exhaustive] = await Promise.all([
        call(auto.base, 'POST', '/api/v1/memory/vector/search', body, c.headers),
        call(exact.base, 'POST', '/api/v1/memory/vector/search', body, c.headers),
      ]);
      expect(approximate.status).toBe(200);
      expect(exhaustive.status).toBe(200);
      const expected = oracle(
        query,
        c.refs,
        c.body.top_k as number,
        c.body.filters as Record<string, unknown>,
      );
      const shape = (results: Array<{ key: string; scope: string }>) =>
        results.map((r) => `${r.scope}:${r.key}`);
      expect(shape(exhaustive.body.results)).toEqual(shape(expected));
      expect(shape(approximate.body.results)).toEqual(shape(expected));
      for (const [n, result] of (approximate.body.results as Array<{ score: number }>).entries()) {
        expect(result.score).toBeCloseTo(expected[n]!.score, 5);
        expect(result.score).toBeCloseTo(exhaustive.body.results[n].score, 5);
      }
    },
  );

  it('walks the HNSW index where the database has pgvector, and searches exactly where it does not', async () => {
    const { db } = auto.handle;
    const pgvector = await hasPgvector(db);
    // PGlite ships pgvector; the PostgreSQL of this machine has not got it.
    if (databaseKind(db) === 'pglite') expect(pgvector).toBe(true);
    const settings = { ...auto.config.memory };
    const service = createVectorService({
      db,
      clock: auto.clock,
      metrics: createMemoryMetrics(createMetricsRegistry()),
      settings,
      log: silentLogger(),
    });
    expect(await service.engine()).toBe(pgvector ? 'pgvector' : 'exact');
    expect(
      await createVectorService({
        db,
        clock: auto.clock,
        metrics: createMemoryMetrics(createMetricsRegistry()),
        settings: { ...settings, vectorSearch: 'exact' },
        log: silentLogger(),
      }).engine(),
    ).toBe('exact');
    const indexes = await db.raw(
      `select indexname from pg_indexes where tablename = 'memory_vectors' and indexname = ?`,
      [`memory_vectors_hnsw_${DIMS}`],
    );
    expect(indexes.rows).toHaveLength(pgvector ? 1 : 0);

    const ran: Array<{ sql: string; bindings: unknown[] }> = [];
    const listen = (query: { sql: string; bindings?: unknown[] }) =>
      ran.push({ sql: query.sql, bindings: query.bindings ?? [] });
    db.on('query', listen);
    const walked = async (filters?: Record<string, unknown>) => {
      ran.length = 0;
      const body = { query_embedding: gaussian(random(7), DIMS), top_k: 5, filters };
      const answer = await call(auto.base, 'POST', '/api/v1/memory/vector/search', body);
      expect(answer.body.results).toHaveLength(5);
      return ran.find((q) => q.sql.includes('<=>') && q.sql.includes('chr(31)'));
    };
    let graph: (typeof ran)[number] | undefined;
    try {
      if (pgvector) {
        // A broad filter walks the graph too; a selective one (480 matches) compares them all.
        expect(await walked({ kind: 'doc' })).toBeDefined();
        expect(await walked({ group: 1 })).toBeUndefined();
      }
      graph = await walked();
    } finally {
      db.off('query', listen);
    }
    if (!pgvector) {
      expect(ran.some((q) => q.sql.includes('memory_vector_dot') && !q.sql.includes('<=>'))).toBe(true);
      expect(graph).toBeUndefined();
      return;
    }
    expect(graph).toBeDefined();
    // The plan of that very query, with the settings the engine gave it: an HNSW index scan.
    const plan = await db.transaction(async (trx) => {
      await trx.raw(
        `select set_config('hnsw.iterative_scan', 'strict_order', true), set_config('enable_seqscan', 'off', true)`,
      );
      const result = await trx.raw(`explain ${graph!.sql.replace(/\$\d+/g, '?')}`, graph!.bindings as never);
      return (result.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain(`Index Scan using memory_vectors_hnsw_${DIMS}`);
  });

  // Regression: CREATE INDEX (the first store of a new dimension) gives the table a row count
  // while its columns have no statistics (embedded PGlite never runs ANALYZE); the planner then
  // guessed `dimensions = n` matches 0.5 % of the rows and sorted them all through the scope index
  // instead of walking the graph: every search compared every vector of the dimension.
  it('keeps walking the HNSW index once creating another index has given the table a row count', async () => {
    const { db } = auto.handle;
    if (!(await hasPgvector(db))) return;
    const other = { key: 'stats', embedding: [1, 2, 3, 4, 5], scope: 'workflow', scope_id: 'wf-stats' };
    expect((await call(auto.base, 'POST', '/api/v1/memory/vector', other)).status).toBe(200);
    const stats = await db.raw(`select reltuples from pg_class where relname = 'memory_vectors'`);
    expect(Number(stats.rows[0].reltuples)).toBeGreaterThanOrEqual(GLOBAL_VECTORS);

    const ran: Array<{ sql: string; bindings: unknown[] }> = [];
    const listen = (query: { sql: string; bindings?: unknown[] }) =>
      ran.push({ sql: query.sql, bindings: query.bindings ?? [] });
    db.on('query', listen);
    try {
      const body = { query_embedding: gaussian(random(8), DIMS), top_k: 5 };
      expect((await call(auto.base, 'POST', '/api/v1/memory/vector/search', body)).status).toBe(200);
    } finally {
      db.off('query', listen);
    }
    // The search's own statements, replayed: its settings, then the plan of its walk.
    const native = (q: (typeof ran)[number]) => [q.sql.replace(/\$\d+/g, '?'), q.bindings as never] as const;
    const settings = ran.find((q) => q.sql.includes('set_config'));
    const graph = ran.find((q) => q.sql.includes('<=>') && q.sql.includes('chr(31)'));
    expect(settings && graph).toBeDefined();
    const plan = await db.transaction(async (trx) => {
      await trx.raw(...native(settings!));
      const [sql, bindings] = native(graph!);
      const result = await trx.raw(`explain ${sql}`, bindings);
      return (result.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain(`Index Scan using memory_vectors_hnsw_${DIMS}`);
  });

  // Regression: pgvector's distances are 4-byte floats, in which these vectors are all at
  // distance 0 from the query; its "exact" comparison of small scopes and few filtered matches
  // took the first top_k by that distance (then by key), k0 to k2, the three least similar.
  it.each([
    ['compares a small scope', undefined],
    ['compares the few matches of a filter', { tie: true }],
  ])(
    'rank vectors closer than 4-byte rounding by their exact scores when the engine %s',
    async (_, filters) => {
      const headers = { 'X-Workflow-ID': 'wf-ties' };
      for (let i = 0; i < 5; i++) {
        const vector = { key: `k${i}`, embedding: [1, (20 - 4 * i) * 1e-5], metadata: { tie: true } };
        expect((await call(auto.base, 'POST', '/api/v1/memory/vector', vector, headers)).status).toBe(200);
      }
      const body = { query_embedding: [1, 0], top_k: 3, scope: 'workflow', filters };
      const [approximate, exhaustive] = await Promise.all([
        call(auto.base, 'POST', '/api/v1/memory/vector/search', body, headers),
        call(exact.base, 'POST', '/api/v1/memory/vector/search', body, headers),
      ]);
      const keys = (answer: { body: { results: Array<{ key: string }> } }) =>
        answer.body.results.map((r) => r.key);
      expect(keys(exhaustive)).toEqual(['k4', 'k3', 'k2']);
      expect(keys(approximate)).toEqual(['k4', 'k3', 'k2']);
      expect(approximate.body).toEqual(exhaustive.body);
    },
  );
});
