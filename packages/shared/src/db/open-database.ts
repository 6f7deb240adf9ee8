import { mkdirSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';

export type Database = Knex;
export type DatabaseKind = 'pglite' | 'postgres';

export interface DatabaseOptions {
  /** A PostgreSQL connection string; when set, the database is that server (through `pg`). */
  url?: string | undefined;
  /** Where embedded PGlite keeps its files; omitted means in memory (tests). */
  dataDir?: string | undefined;
  /** Largest number of pooled connections to PostgreSQL (PGlite always has exactly one). */
  poolMax?: number;
  /**
   * Embedded PGlite only: start from this data directory, a tarball as PGlite's `dumpDataDir()`
   * writes it, instead of creating an empty database (tests start from a migrated copy this way).
   */
  loadDataDir?: Blob | undefined;
}

const INT8_OID = 20;

// COUNT(*) and bigint columns arrive as strings from `pg` (they may exceed 2^53). Our counts and
// sizes never do, so both drivers hand them back as numbers and code never sees two shapes.
pg.types.setTypeParser(INT8_OID, (value: string) => Number(value));

const kinds = new WeakMap<Knex, DatabaseKind>();
const pglites = new WeakMap<Knex, PGlite>();

/**
 * Opens the database both apps use: PostgreSQL when `url` is given, embedded PGlite (with the
 * vector extension loaded) otherwise. The caller owns the handle and calls `destroy()` when done.
 */
export async function openDatabase(options: DatabaseOptions = {}): Promise<Database> {
  if (options.url) {
    const db = knexFactory({
      client: 'pg',
      connection: options.url,
      pool: { min: 0, max: options.poolMax ?? 10 },
    });
    await db.raw('select 1');
    kinds.set(db, 'postgres');
    return db;
  }
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  optimizeWasmLate();
  const pglite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    extensions: { vector },
    startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS],
    parsers: { [INT8_OID]: (value: string) => Number(value) },
  });
  return onPglite(pglite, ClientPgLiteTakingTurns);
}

/**
 * PGlite is PostgreSQL compiled to WebAssembly. V8 compiles each wasm function with its baseline
 * compiler first, and again with its optimizing compiler once the function has used up a budget
 * (roughly bytes of code executed: 1,800,000 in Node 20's V8; later V8 releases raised their own
 * default to 13,000,000). Starting PostgreSQL runs a great deal of code once, so at Node 20's
 * default much of the optimizing went to code that never ran again. A budget of 30,000,000 leaves
 * more of start-up on baseline code, while the functions queries run over and over still get
 * optimized within moments. bench/control-plane/embedded-start.mjs measures it against V8's
 * default in the same run (its README has the figures): about a fifth less CPU and time to start
 * the control plane on it, a seventh less CPU to open a new database, and about 0.3 s of CPU
 * more, once, over the first seconds of heavy queries (their hot functions are optimized a little
 * later). Larger budgets saved a little more at start and cost more afterwards: 180,000,000 took
 * about 0.4 s more over the first queries, whether they ran for 6 s or for 20.
 *
 * The budget is a process-wide V8 setting, read when PGlite's module is instantiated; it changes
 * how soon code is optimized, never what it does. A `--wasm-tiering-budget` given on node's
 * command line is left as given (the benchmark's reference run passes V8's default that way).
 */
const WASM_TIERING_BUDGET = 30_000_000;
let wasmBudgetSet = false;

function optimizeWasmLate(): void {
  if (wasmBudgetSet) return;
  wasmBudgetSet = true;
  if (process.execArgv.some((arg) => arg.startsWith('--wasm-tiering-budget'))) return;
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
}

/**
 * The embedded database's page cache. PGlite's data directory comes with PostgreSQL's server
 * default of 128 MB of shared buffers, and starting it zeroes all of them in WebAssembly memory:
 * 0.6 to 0.7 s of CPU on every open and about 90 MB more resident memory in every process, for a
 * cache a single embedded process rarely fills. Pages outside a smaller cache come from the data
 * directory's files through the operating system's cache. bench/control-plane/embedded-cache.mjs
 * measures both sizes in the same run (its README section has the figures); on the control plane,
 * a start on a migrated directory took 0.45 s of CPU less (2.72 s against 3.18 s), sat at 259 MB
 * resident against 345 MB when idle, and kept its sync and async rates (executions.mjs on PGlite,
 * with 100,000 finished executions in the table) within the runs' spread. The write-ahead log's
 * buffers stay at the 4 MB the old cache size gave them (by default they are a thirty-second of it).
 */
export const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB', '-c', 'wal_buffers=4MB'];

/**
 * knex-pglite's client, except that each statement first lets the event loop take a turn. PGlite
 * runs in this thread, and a statement's end starts the next waiting one in the same run of
 * promise callbacks, so without the turn a burst of database work never lets the loop accept a
 * connection or read a request. Measured: a control plane restarted with 850 queued executions
 * accepted two connections a second while it dispatched them, and the agents' status reports
 * waited 11 to 16 s (long enough for the orphan recovery to send some executions again).
 */
class ClientPgLiteTakingTurns extends ClientPgLite {
  override async query(connection: unknown, query: unknown): Promise<unknown> {
    await nextTurn();
    return super.query(connection, query);
  }
}

/** The same, except that destroying the handle leaves the instance open. */
class ClientPgLiteKeepingOpen extends ClientPgLiteTakingTurns {
  override async destroyRawConnection(): Promise<void> {}
}

/**
 * A handle on an embedded PGlite instance that outlives it: `destroy()` ends the handle (its
 * queries fail from then on) and leaves the instance open for the caller, who closes it. Test
 * databases hand one instance to test after test this way (test-database.ts).
 */
export function borrowPglite(pglite: PGlite): Database {
  return onPglite(pglite, ClientPgLiteKeepingOpen);
}

function onPglite(pglite: PGlite, client: typeof ClientPgLite): Database {
  const db = knexFactory({
    client: client as unknown as typeof Knex.Client,
    dialect: 'postgres',
    // knex-pglite takes an existing instance through a connection function; that is how the
    // vector extension gets loaded.
    connection: (() => ({ pglite })) as unknown as Knex.StaticConnectionConfig,
  });
  kinds.set(db, 'pglite');
  pglites.set(db, pglite);
  return db;
}

/** Which engine a handle from {@link openDatabase} talks to. */
export function databaseKind(db: Database): DatabaseKind {
  const kind = kinds.get(db);
  if (!kind) throw new Error('not a handle from openDatabase()');
  return kind;
}

/** The embedded PGlite instance behind a handle, for LISTEN/NOTIFY; undefined on PostgreSQL. */
export function embeddedPglite(db: Database): PGlite | undefined {
  return pglites.get(db);
}

/**
 * True when pgvector can be used: the extension is installed, or available and installable by
 * this role. PGlite always has it; a stock PostgreSQL often does not, and callers fall back to
 * exact cosine similarity in SQL.
 */
export async function hasPgvector(db: Database): Promise<boolean> {
  const installed = await db.raw(`select 1 from pg_extension where extname = 'vector'`);
  if (installed.rows.length > 0) return true;
  const available = await db.raw(`select 1 from pg_available_extensions where name = 'vector'`);
  if (available.rows.length === 0) return false;
  try {
    await db.raw('create extension if not exists vector');
    return true;
  } catch {
    return false;
  }
}
