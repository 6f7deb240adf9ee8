import type { Knex } from 'knex';
import { toSql } from 'pgvector';
import { QUOTA_SETTINGS, quotaBindings, type ScopeQuota } from './scope-quota.ts';
import { SCOPES, type Scope, type ScopeRef } from './scopes.ts';

/** One stored vector. */
export interface VectorEntry extends ScopeRef {
  key: string;
  dimensions: number;
  embedding: number[];
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** One search result: where it lives, its cosine similarity to the query, its metadata. */
export interface VectorHit extends ScopeRef {
  key: string;
  score: number;
  metadata: Record<string, unknown>;
}

/**
 * An embedding as the database receives it. The numbers are float4-rounded first, so the norm is
 * the norm of what `real[]` keeps, the text round-trips exactly, and no number underflows:
 * PostgreSQL refuses `'1e-50'::real` as out of range, while its rounded value 0 is fine.
 */
export interface EncodedEmbedding {
  dimensions: number;
  /** The float4-rounded numbers. */
  values: number[];
  /** Literal text of a `real[]`: `{0.1,-2.5,...}`; sent as text with `?::real[]` (knex would expand an array). */
  array: string;
  /** Literal text of a pgvector `vector`: `[0.1,-2.5,...]`. */
  vector: string;
  /** Euclidean norm of the rounded numbers. */
  norm: number;
}

export function encodeEmbedding(values: readonly number[]): EncodedEmbedding {
  const rounded = values.map((x) => Math.fround(x));
  let sum = 0;
  for (const x of rounded) sum += x * x;
  return {
    dimensions: rounded.length,
    values: rounded,
    array: `{${rounded.join(',')}}`,
    vector: toSql(rounded),
    norm: Math.sqrt(sum),
  };
}

/** What a search asks of the table. */
export interface VectorQuery {
  query: EncodedEmbedding;
  /** The scopes searched (at least one). */
  refs: ScopeRef[];
  /** JSON text of a containment filter on metadata, when there is one. */
  filters?: string;
  topK: number;
}

interface Row {
  scope: Scope;
  scope_id: string;
  key: string;
  dimensions: number;
  embedding: number[];
  metadata: Record<string, unknown>;
  created_at: Date | string;
  updated_at: Date | string;
}

interface HitRow {
  scope: Scope;
  scope_id: string;
  key: string;
  metadata: Record<string, unknown>;
  score: number | string;
}

function hitOf(row: HitRow): VectorHit {
  return {
    scope: row.scope,
    scopeId: row.scope_id,
    key: row.key,
    score: Number(row.score),
    metadata: row.metadata,
  };
}

/**
 * Cosine similarity as SCORE computes it in SQL, in the same operations and order: float4
 * numbers widened to double, products summed one after another, divided by both norms. So the
 * engines agree to the last bit.
 */
function cosine(query: EncodedEmbedding, embedding: number[], norm: number): number {
  let dot = 0;
  for (let i = 0; i < query.values.length; i++) {
    dot += Math.fround(Number(embedding[i])) * (query.values[i] as number);
  }
  return Math.max(-1, Math.min(1, dot / (norm * query.norm)));
}

/**
 * Namespace of the advisory locks that serialise the writes of one scope instance (the first
 * argument of the two-key pg_advisory_xact_lock; key-value memory locks keys under another).
 */
const SCOPE_LOCK_NAMESPACE = 0x4d454d56; // "MEMV"

/**
 * Takes the scope instance's write lock until the transaction ends, and holds the transaction's
 * writes to `quota` (the usage trigger refuses one past it with SQLSTATE SYQ01). Run it as a
 * statement of its own before reading anything: under READ COMMITTED each statement takes its
 * snapshot when it starts, so the dimension check that follows sees every vector committed by a
 * writer that held the lock before us.
 */
export async function lockScope(trx: Knex.Transaction, ref: ScopeRef, quota: ScopeQuota): Promise<void> {
  await trx.raw(
    `select pg_advisory_xact_lock(${SCOPE_LOCK_NAMESPACE}, hashtext(?::text || chr(31) || ?::text)), ${QUOTA_SETTINGS}`,
    [ref.scope, ref.scopeId, ...quotaBindings(quota)],
  );
}

/** The dimension of some other key's vector in `ref`, when it is not `dimensions`. */
export async function otherDimension(
  db: Knex,
  ref: ScopeRef,
  key: string,
  dimensions: number,
): Promise<number | undefined> {
  const result = await db.raw(
    `select dimensions from memory_vectors
     where scope = ? and scope_id = ? and dimensions <> ? and key <> ?
     limit 1`,
    [ref.scope, ref.scopeId, dimensions, key],
  );
  return (result.rows[0] as { dimensions: number } | undefined)?.dimensions;
}

/** Writes (or replaces) the vector of `key` in `ref`; returns when it was first and last written. */
export async function upsertVector(
  db: Knex,
  vector: { ref: ScopeRef; key: string; embedding: EncodedEmbedding; metadata: string; at: Date },
): Promise<{ createdAt: Date; updatedAt: Date }> {
  const stamp = vector.at.toISOString();
  const result = await db.raw(
    `insert into memory_vectors
       (scope, scope_id, key, dimensions, embedding, norm, metadata, created_at, updated_at)
     values (?, ?, ?, ?, ?::real[], ?, ?::jsonb, ?::timestamptz, ?::timestamptz)
     on conflict (scope, scope_id, key) do update set
       dimensions = excluded.dimensions, embedding = excluded.embedding, norm = excluded.norm,
       metadata = excluded.metadata, updated_at = excluded.updated_at
     returning created_at, updated_at`,
    [
      vector.ref.scope,
      vector.ref.scopeId,
      vector.key,
      vector.embedding.dimensions,
      vector.embedding.array,
      vector.embedding.norm,
      vector.metadata,
      stamp,
      stamp,
    ],
  );
  const row = result.rows[0] as Pick<Row, 'created_at' | 'updated_at'>;
  return { createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}

/**
 * Many vectors in one statement, for loading data in bulk (benchmarks): `unnest` of parallel
 * arrays, each embedding as its `real[]` text. Existing keys are replaced. No dimension check:
 * the caller loads one dimension per scope.
 */
export async function insertVectors(
  db: Knex,
  vectors: Array<{ ref: ScopeRef; key: string; embedding: EncodedEmbedding; metadata: string }>,
  at: Date,
): Promise<void> {
  if (vectors.length === 0) return;
  // Arrays travel as JSON text: knex expands a JS array in raw bindings, and real[][] would need
  // equal lengths.
  await db.raw(
    `insert into memory_vectors
       (scope, scope_id, key, dimensions, embedding, norm, metadata, created_at, updated_at)
     select v.scope, v.scope_id, v.key, v.dimensions, v.embedding::real[], v.norm, v.metadata::jsonb,
            ?::timestamptz, ?::timestamptz
     from jsonb_to_recordset(?::jsonb) as v(scope text, scope_id text, key text, dimensions int,
                                           embedding text, norm double precision, metadata text)
     on conflict (scope, scope_id, key) do update set
       dimensions = excluded.dimensions, embedding = excluded.embedding, norm = excluded.norm,
       metadata = excluded.metadata, updated_at = excluded.updated_at`,
    [
      at.toISOString(),
      at.toISOString(),
      JSON.stringify(
        vectors.map((v) => ({
          scope: v.ref.scope,
          scope_id: v.ref.scopeId,
          key: v.key,
          dimensions: v.embedding.dimensions,
          embedding: v.embedding.array,
          norm: v.embedding.norm,
          metadata: v.metadata,
        })),
      ),
    ],
  );
}

/** The vector of `key` in the first of `refs` (in their order) that holds one. */
export async function findVector(db: Knex, refs: ScopeRef[], key: string): Promise<VectorEntry | undefined> {
  if (refs.length === 0) return undefined;
  const result = await db.raw(
    `select scope, scope_id, key, dimensions, embedding, metadata, created_at, updated_at
     from memory_vectors
     where key = ? and (scope, scope_id) in (${pairs(refs)})
     order by ${SCOPE_RANK}
     limit 1`,
    [key, ...pairValues(refs)],
  );
  const row = result.rows[0] as Row | undefined;
  if (!row) return undefined;
  return {
    scope: row.scope,
    scopeId: row.scope_id,
    key: row.key,
    dimensions: row.dimensions,
    embedding: row.embedding.map(Number),
    metadata: row.metadata,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Deletes the vector of `key` in `ref`; whether there was one. */
export async function deleteVector(db: Knex, ref: ScopeRef, key: string): Promise<boolean> {
  const result = await db.raw(
    'delete from memory_vectors where scope = ? and scope_id = ? and key = ? returning key',
    [ref.scope, ref.scopeId, key],
  );
  return result.rows.length > 0;
}

// ---- search ----

/** Scope precedence as a sort key: workflow first, global last. SCOPES are fixed words. */
const SCOPE_RANK = `array_position('{${SCOPES.join(',')}}'::text[], scope)`;

function pairs(refs: ScopeRef[]): string {
  return refs.map(() => '(?, ?)').join(', ');
}

function pairValues(refs: ScopeRef[]): string[] {
  return refs.flatMap((ref) => [ref.scope, ref.scopeId]);
}

/**
 * A dimension as SQL text. It is inlined, never bound: a partial index (`where dimensions = 384`)
 * is only used when the planner can prove its predicate from constants, and `vector(n)` takes a
 * constant anyway. Checked here because it becomes SQL.
 */
function dimensionsLiteral(dimensions: number): string {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16_000) {
    throw new Error(`not a vector dimension: ${dimensions}`);
  }
  return String(dimensions);
}

/**
 * Cosine similarity of each row to the query in double precision, from the float4 numbers and
 * the stored norm, clamped to [-1, 1] against rounding. Exact search scores every row with it;
 * pgvector search computes the same (`cosine`) for the few rows it returns.
 */
const SCORE = 'greatest(-1, least(1, memory_vector_dot(embedding, ?::real[]) / (norm * ?)))';

function scoreValues(query: EncodedEmbedding): [string, number] {
  return [query.array, query.norm];
}

/**
 * Exact search without pgvector: every vector of the query's dimension in the scopes (and
 * matching the filters) is scored; the best `topK` are returned, best first, ties in scope
 * precedence and then key order (bytewise, the same on every database).
 */
export async function searchByDot(db: Knex, search: VectorQuery): Promise<VectorHit[]> {
  const n = dimensionsLiteral(search.query.dimensions);
  const filter = search.filters === undefined ? '' : 'and metadata @> ?::jsonb';
  const result = await db.raw(
    `select scope, scope_id, key, metadata, ${SCORE} as score
     from memory_vectors
     where dimensions = ${n} and (scope, scope_id) in (${pairs(search.refs)}) ${filter}
     order by score desc, ${SCOPE_RANK}, key collate "C"
     limit ?`,
    [
      ...scoreValues(search.query),
      ...pairValues(search.refs),
      ...(search.filters === undefined ? [] : [search.filters]),
      search.topK,
    ],
  );
  return (result.rows as HitRow[]).map(hitOf);
}

/**
 * How many vectors of the query's dimension the scopes hold, counted up to `cap` (through the
 * (scope, scope_id, dimensions) index, so counting stops early in a big scope). `settings` are
 * set for the rest of the transaction by the same statement, saving a round trip.
 */
export async function countCandidates(
  db: Knex,
  search: VectorQuery,
  cap: number,
  settings: Record<string, string> = {},
): Promise<number> {
  const n = dimensionsLiteral(search.query.dimensions);
  const names = Object.keys(settings);
  const result = await db.raw(
    `select ${names.map(() => 'set_config(?, ?, true), ').join('')}
       (select count(*)::int from (
         select 1 from memory_vectors
         where dimensions = ${n} and (scope, scope_id) in (${pairs(search.refs)})
         limit ?
       ) candidates) as n`,
    [...names.flatMap((name) => [name, settings[name] as string]), ...pairValues(search.refs), cap],
  );
  return Number((result.rows[0] as { n: number }).n);
}

type DistanceRow = HitRow & { embedding: number[]; norm: number | string; distance: number | string };

/** A result of pgvector's ordering: scored exactly, with the 4-byte float distance it was ranked by. */
export interface DistanceHit extends VectorHit {
  distance: number;
}

function scoredHit(search: VectorQuery, row: DistanceRow): DistanceHit {
  return {
    ...hitOf({ ...row, score: cosine(search.query, row.embedding, Number(row.norm)) }),
    distance: Number(row.distance),
  };
}

/** How many rows nearest by distance to read: `limit` of them, or all within `within` (up to `limit`). */
export interface DistancePage {
  limit: number;
  within?: number;
}

/**
 * The `limit` nearest by distance among the candidates (vectors of the query's dimension in the
 * scopes, matching the filters), all of them compared, when there are at most `cap` of them;
 * undefined when there are more. One statement
 * that reads at most `cap` + 1 candidates: with selective filters it reads the scopes through (no
 * index serves `metadata @>`), with broad ones it stops early, and then compares none of them
 * (the comparison is gated on the count).
 */
export async function searchAmongFew(
  db: Knex,
  search: VectorQuery,
  cap: number,
  limit: number,
): Promise<DistanceHit[] | undefined> {
  const n = dimensionsLiteral(search.query.dimensions);
  const filter = search.filters === undefined ? '' : 'and metadata @> ?::jsonb';
  // The left join answers one row even when nothing is compared, carrying the count.
  const result = await db.raw(
    `with candidates as materialized (
       select scope, scope_id, key, metadata, embedding, norm
       from memory_vectors
       where dimensions = ${n} and (scope, scope_id) in (${pairs(search.refs)}) ${filter}
       limit ?
     ),
     counted as (select count(*)::int as candidates from candidates)
     select nearest.*, counted.candidates
     from counted left join lateral (
       select scope, scope_id, key, metadata, embedding, norm,
              embedding::vector(${n}) <=> ?::vector(${n}) as distance
       from candidates
       where counted.candidates <= ?
       order by distance, ${SCOPE_RANK}, key collate "C"
       limit ?
     ) nearest on true`,
    [
      ...pairValues(search.refs),
      ...(search.filters === undefined ? [] : [search.filters]),
      cap + 1,
      search.query.vector,
      cap,
      limit,
    ],
  );
  const rows = result.rows as Array<DistanceRow & { candidates: number }>;
  if (Number(rows[0]?.candidates) > cap) return undefined;
  return rows.filter((row) => row.key !== null).map((row) => scoredHit(search, row));
}

/**
 * The nearest vectors by pgvector's cosine distance on `embedding::vector(n)` (float4
 * arithmetic), `page.limit` of them or those within `page.within`, then scored exactly by
 * `cosine` (the SQL function costs about 0.5 ms a row on PGlite). `graph` writes the scope condition so that no B-tree can serve it: the planner
 * is then left with the HNSW index of the dimension (`memory_vectors_hnsw_<n>`), whatever its
 * statistics say (embedded PGlite never runs ANALYZE, and without statistics the planner prefers
 * the scope index and sorts every vector). Without `graph` the condition uses the scope index; the
 * caller disables index scans so the result is exact.
 */
export async function searchByDistance(
  db: Knex,
  search: VectorQuery,
  mode: 'graph' | 'scan',
  page: DistancePage = { limit: search.topK },
): Promise<DistanceHit[]> {
  const n = dimensionsLiteral(search.query.dimensions);
  const scopes =
    mode === 'graph'
      ? `(scope || chr(31) || scope_id) in (${search.refs.map(() => '?').join(', ')})`
      : `(scope, scope_id) in (${pairs(search.refs)})`;
  const scopeValues =
    mode === 'graph' ? search.refs.map((ref) => `${ref.scope}\u001f${ref.scopeId}`) : pairValues(search.refs);
  const filter = search.filters === undefined ? '' : 'and metadata @> ?::jsonb';
  const distance = `embedding::vector(${n}) <=> ?::vector(${n})`;
  const within = page.within === undefined ? '' : `and ${distance} <= ?`;
  const result = await db.raw(
    `select scope, scope_id, key, metadata, embedding, norm, ${distance} as distance
     from memory_vectors
     where dimensions = ${n} and ${scopes} ${filter} ${within}
     order by distance, ${SCOPE_RANK}, key collate "C"
     limit ?`,
    [
      search.query.vector,
      ...scopeValues,
      ...(search.filters === undefined ? [] : [search.filters]),
      ...(page.within === undefined ? [] : [search.query.vector, page.within]),
      page.limit,
    ],
  );
  return (result.rows as DistanceRow[]).map((row) => scoredHit(search, row));
}

// ---- HNSW indexes ----

/** The name of the HNSW index of one dimension. */
export function hnswIndexName(dimensions: number): string {
  return `memory_vectors_hnsw_${dimensionsLiteral(dimensions)}`;
}

/** Whether the HNSW index of a dimension exists (read from the catalog, which takes no lock). */
export async function hnswIndexExists(db: Knex, dimensions: number): Promise<boolean> {
  const result = await db.raw(
    `select 1 from pg_indexes
     where schemaname = current_schema() and tablename = 'memory_vectors' and indexname = ?`,
    [hnswIndexName(dimensions)],
  );
  return result.rows.length > 0;
}

/**
 * Creates the HNSW index of a dimension: a partial index on the expression `embedding::vector(n)`
 * (cosine distance) over the rows of that dimension only, so one table serves every dimension.
 */
export async function createHnswIndex(db: Knex, dimensions: number): Promise<void> {
  const n = dimensionsLiteral(dimensions);
  await db.raw(
    `create index if not exists ${hnswIndexName(dimensions)} on memory_vectors
     using hnsw ((embedding::vector(${n})) vector_cosine_ops) where dimensions = ${n}`,
  );
}
