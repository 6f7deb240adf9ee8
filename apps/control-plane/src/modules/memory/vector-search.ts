import { hasPgvector } from '@switchyard/shared/db';
import type { Knex } from 'knex';
import type { ValuesOf } from '../../platform/config/setting.ts';
import type { Logger } from '../../platform/logger.ts';
import { SCOPES } from './scopes.ts';
import type { memorySettings } from './settings.ts';
import {
  countCandidates,
  createHnswIndex,
  type DistanceHit,
  type DistancePage,
  hnswIndexExists,
  searchAmongFew,
  searchByDistance,
  searchByDot,
  type VectorHit,
  type VectorQuery,
} from './vector-repository.ts';

/** HNSW indexes `vector` columns of at most this many dimensions (pgvector's limit). */
export const HNSW_MAX_DIMENSIONS = 2000;

/**
 * Below this many candidate vectors (of the query's dimension, in the searched scopes, matching
 * the filters) a search
 * compares them all instead of walking the graph: exact, and about as fast at this size (on PGlite
 * at 384 dimensions, comparing 1,000 vectors costs what a walk costs; 2,000 twice that). It also
 * keeps small scopes away from the graph, where most of what a walk visits belongs to other scopes.
 */
export const EXACT_BELOW = 1000;

/**
 * How far pgvector's cosine distance of `dimensions` numbers may be from the exact one, twice
 * over. It sums products and squares in 4-byte floats: each sum is off by at most γn = n·u/(1 - n·u)
 * of its magnitude (u = 2^-24), so the similarity by at most 2γn. A vector among the exact top_k
 * is therefore within twice that of the top_k-th distance pgvector reports.
 */
function roundingMargin(dimensions: number): number {
  const nu = dimensions * 2 ** -24;
  return 4 * (nu / (1 - nu));
}

/**
 * Rows a search reads when many lie within the rounding margin of its last result, beyond which
 * it ranks them by distance alone: a guard against a scope of thousands of copies of one vector.
 */
const MARGIN_ROWS = EXACT_BELOW;

/**
 * `pgvector`: HNSW indexes (approximate, fast) where the extension exists; `exact`: every vector
 * compared in SQL with `memory_vector_dot`.
 */
export type VectorEngine = 'pgvector' | 'exact';

export interface VectorSearchDeps {
  db: Knex;
  settings: Pick<ValuesOf<typeof memorySettings>, 'vectorSearch' | 'vectorEfSearch'>;
  log: Logger;
}

/** Duplicate index (42P07) or a racing catalog insert (23505): another replica created it first. */
function isDuplicate(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === '42P07' || code === '23505';
}

/**
 * The search engines and the HNSW indexes they use. `memory.vector_search` `auto` takes pgvector
 * when the database has it (asked once per process) and exact search otherwise; `exact` always
 * takes exact search.
 */
export function createVectorSearch(deps: VectorSearchDeps) {
  const { db, settings, log } = deps;
  let available: Promise<boolean> | undefined;
  /** Dimensions whose HNSW index is known to exist. */
  const indexed = new Set<number>();

  async function engine(): Promise<VectorEngine> {
    if (settings.vectorSearch === 'exact') return 'exact';
    // Not cached when asking failed (the database was away): the next call asks again.
    available ??= hasPgvector(db).catch((error: unknown) => {
      available = undefined;
      throw error;
    });
    return (await available) ? 'pgvector' : 'exact';
  }

  /**
   * The settings of a graph walk (see searchByDistance). strict_order: when filters (scopes,
   * metadata) reject what the walk finds, it goes on walking, in distance order, instead of
   * answering fewer than top_k. enable_seqscan off makes the graph the cheapest plan even where
   * the planner has no statistics; enable_sort off keeps it so once the table has a row count
   * without column statistics (CREATE INDEX gives one, and embedded PGlite never runs ANALYZE):
   * the planner then takes `dimensions = n` for a few rows, and sorting them all after a scan of
   * the scope index would look cheaper than the walk, the only plan that needs no sort.
   */
  const graphSettings = (topK: number) => ({
    'hnsw.ef_search': String(Math.max(settings.vectorEfSearch, topK)),
    'hnsw.iterative_scan': 'strict_order',
    enable_seqscan: 'off',
    enable_sort: 'off',
  });

  /**
   * The exact `topK` from pgvector's ordering of every candidate: its 4-byte distances can put
   * vectors closer than their rounding in the wrong order, so every row within the rounding margin
   * of the last one is read and all are ranked by their exact scores. `read` answers the rows
   * nearest by distance; the first read takes one row more than asked, which tells whether any
   * row beyond lies within the margin.
   */
  async function exactly(
    search: VectorQuery,
    read: (page: DistancePage) => Promise<DistanceHit[] | undefined>,
  ): Promise<VectorHit[] | undefined> {
    let hits = await read({ limit: search.topK + 1 });
    const last = hits?.[search.topK - 1];
    const within = last && last.distance + roundingMargin(search.query.dimensions);
    if (within !== undefined && (hits?.[search.topK]?.distance ?? Infinity) <= within) {
      hits = await read({ limit: search.topK + MARGIN_ROWS, within });
    }
    return hits?.sort(compareHits).slice(0, search.topK);
  }

  /**
   * The rest of the transaction compares every candidate: no index scans, so no graph (the scope
   * index serves bitmap scans).
   */
  async function compareAll(trx: Knex.Transaction): Promise<void> {
    await trx.raw(
      `select set_config('enable_indexscan', 'off', true), set_config('enable_seqscan', 'on', true),
         set_config('enable_sort', 'on', true)`,
    );
  }

  /** Compares every candidate. */
  async function scan(trx: Knex.Transaction, search: VectorQuery): Promise<VectorHit[]> {
    await compareAll(trx);
    return (await exactly(search, (page) => searchByDistance(trx, search, 'scan', page))) ?? [];
  }

  async function nearest(search: VectorQuery): Promise<VectorHit[]> {
    if (search.query.dimensions > HNSW_MAX_DIMENSIONS) {
      // No index can exist at this size: pgvector compares every candidate.
      return (await exactly(search, (page) => searchByDistance(db, search, 'scan', page))) ?? [];
    }
    // On embedded PGlite there is one connection: inside this callback only trx may be used.
    return db.transaction(async (trx) => {
      if (search.filters === undefined) {
        // Counting through the scope index is cheap, so the small case pays a round trip more.
        const candidates = await countCandidates(trx, search, EXACT_BELOW, graphSettings(search.topK));
        if (candidates < EXACT_BELOW) return scan(trx, search);
      } else {
        // Filters are checked on every row a walk reaches: one matching few vectors far from the
        // query would make the walk long and its answer poor (measured: recall 0.58 at 100,000
        // vectors). Few matches are compared exactly instead, found in one read.
        const few = await exactly(search, async (page) => {
          if (page.within === undefined) return searchAmongFew(trx, search, EXACT_BELOW, page.limit);
          await compareAll(trx);
          return searchByDistance(trx, search, 'scan', page);
        });
        if (few) return few;
        const settings = Object.entries(graphSettings(search.topK));
        await trx.raw(`select ${settings.map(() => 'set_config(?, ?, true)').join(', ')}`, settings.flat());
      }
      const hits = await searchByDistance(trx, search, 'graph');
      if (hits.length >= search.topK) return hits;
      // Fewer than asked: either fewer vectors match, or the filters rejected everything the walk
      // reached before hnsw.max_scan_tuples. Only an exact search can tell, and answer.
      return scan(trx, search);
    });
  }

  return {
    engine,

    /** The `topK` vectors most similar to the query, best first; ties by scope precedence, then key. */
    async search(search: VectorQuery): Promise<VectorHit[]> {
      const hits = (await engine()) === 'pgvector' ? await nearest(search) : await searchByDot(db, search);
      // The graph orders by pgvector's float4 distance; the answer is ordered by the exact score,
      // as the exact engine orders it.
      return hits.sort(compareHits);
    },

    /**
     * Makes sure the HNSW index of a dimension exists once a vector of it is stored (pgvector
     * only, at most HNSW_MAX_DIMENSIONS). Run outside any transaction: CREATE INDEX locks the
     * table against writes while it builds. Failing to create it is logged, not thrown: the
     * vector is stored, searches of that dimension are exact until a later store creates it.
     */
    async ensureIndex(dimensions: number): Promise<void> {
      if (dimensions > HNSW_MAX_DIMENSIONS || indexed.has(dimensions)) return;
      if ((await engine()) !== 'pgvector') return;
      try {
        if (!(await hnswIndexExists(db, dimensions))) await createHnswIndex(db, dimensions);
        indexed.add(dimensions);
      } catch (error) {
        if (isDuplicate(error)) {
          indexed.add(dimensions);
          return;
        }
        log.warn({ err: error, dimensions }, 'could not create the HNSW index of a vector dimension');
      }
    },
  };
}

export type VectorSearch = ReturnType<typeof createVectorSearch>;

/** Best score first; then scope precedence; then key, compared as UTF-8 bytes like `collate "C"`. */
export function compareHits(a: VectorHit, b: VectorHit): number {
  if (a.score !== b.score) return b.score - a.score;
  const rank = SCOPES.indexOf(a.scope) - SCOPES.indexOf(b.scope);
  if (rank !== 0) return rank;
  return Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
}
