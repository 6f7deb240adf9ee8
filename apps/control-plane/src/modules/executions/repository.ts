import type { Knex } from 'knex';
import { createGroupCommit } from '../../platform/group-commit.ts';
import type { ExecutionRow, ExecutionStatus, TerminalStatus, WaitingFor } from './records.ts';

export type Executor = Knex | Knex.Transaction;
const TABLE = 'executions';

/**
 * Every column but `input`, for writes that hand the row back: the caller already has the input
 * (it may be megabytes), and parsing it back from each insert and update is wasted work.
 */
const RETURNED = [
  'execution_id',
  'run_id',
  'workflow_id',
  'parent_execution_id',
  'session_id',
  'actor_id',
  'caller_node_id',
  'target',
  'node_id',
  'function_name',
  'function_type',
  'lane',
  'status',
  'result',
  'error',
  'error_details',
  'progress',
  'routed_version',
  'agent_base_url',
  'webhook',
  'webhook_registered',
  'webhook_error',
  'depth',
  'available_at',
  'dispatched_by',
  'dispatch_count',
  'accepted_at',
  'dispatched_at',
  'created_at',
  'started_at',
  'completed_at',
  'duration_ms',
  'updated_at',
  'waiting_for',
];
const RETURNED_SQL = RETURNED.join(', ');

/** The columns a new execution is written with (both lanes). */
export type NewExecution = Pick<
  ExecutionRow,
  | 'execution_id'
  | 'run_id'
  | 'workflow_id'
  | 'parent_execution_id'
  | 'session_id'
  | 'actor_id'
  | 'caller_node_id'
  | 'target'
  | 'node_id'
  | 'function_name'
  | 'function_type'
  | 'lane'
  | 'input'
  | 'routed_version'
  | 'agent_base_url'
  | 'webhook'
  | 'webhook_registered'
  | 'webhook_error'
  | 'depth'
  | 'dispatched_by'
  | 'dispatch_count'
> & {
  status: 'queued' | 'running';
  now: Date;
  /** When a running one began, if not now (a local call reported after it began). */
  started_at?: Date;
  /** When an agent took it, if it already has (a local call is the agent's from the start). */
  accepted_at?: Date;
};

/** The columns of a new execution, in the order {@link insertValues} gives their values. */
const INSERT_COLUMNS = [
  'execution_id',
  'run_id',
  'workflow_id',
  'parent_execution_id',
  'session_id',
  'actor_id',
  'caller_node_id',
  'target',
  'node_id',
  'function_name',
  'function_type',
  'lane',
  'status',
  'input',
  'routed_version',
  'agent_base_url',
  'webhook',
  'webhook_registered',
  'webhook_error',
  'depth',
  'dispatched_by',
  'dispatch_count',
  'available_at',
  'created_at',
  'started_at',
  'dispatched_at',
  'accepted_at',
  'updated_at',
] as const;

function insertValues(row: NewExecution): Knex.RawBinding[] {
  const { now } = row;
  const running = row.status === 'running';
  return [
    row.execution_id,
    row.run_id,
    row.workflow_id,
    row.parent_execution_id,
    row.session_id,
    row.actor_id,
    row.caller_node_id,
    row.target,
    row.node_id,
    row.function_name,
    row.function_type,
    row.lane,
    row.status,
    JSON.stringify(row.input),
    row.routed_version,
    row.agent_base_url,
    row.webhook === null ? null : JSON.stringify(row.webhook),
    row.webhook_registered,
    row.webhook_error,
    row.depth,
    row.dispatched_by,
    row.dispatch_count,
    now,
    row.started_at ?? now,
    running ? (row.started_at ?? now) : null,
    running ? now : null,
    row.accepted_at ?? null,
    now,
  ] as Knex.RawBinding[];
}

/**
 * The insert of a new execution, written out once rather than compiled by the query builder on
 * every call, handing back the row but its input.
 */
const INSERT_SQL = `insert into executions (${INSERT_COLUMNS.join(', ')})
     values (${INSERT_COLUMNS.map(() => '?').join(', ')}) returning ${RETURNED_SQL}`;

/** The insert and its event in one statement: the event is only written if the row was. */
const INSERT_WITH_EVENT_SQL = `with inserted as (${INSERT_SQL})
     , logged as (insert into event_log (stream, event, payload) select ?, ?, ?::jsonb from inserted)
     select * from inserted`;

/**
 * A statement every execution runs (the insert of new executions, the end of one without a
 * webhook). On PostgreSQL it goes straight to a connection of the knex
 * pool as a named prepared statement: the connection parses and plans it once instead of on
 * every call, and the query builder's per-query work is skipped.
 * The text of a name never changes (a module constant), as the `pg` driver requires. Inside a
 * transaction, and on embedded PGlite, it runs through knex like any other statement.
 */
interface HotStatement {
  name: string;
  /** With `?` placeholders, for knex. */
  sql: string;
  /** The same with `$1`, `$2`, … for `pg`. */
  pgSql: string;
}

function hotStatement(name: string, sql: string): HotStatement {
  let n = 0;
  return { name: `switchyard_${name}`, sql, pgSql: sql.replace(/\?/g, () => `$${++n}`) };
}

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** Names of knex's `pg` client; embedded PGlite's client is a class (it extends the `pg` one). */
const PG_CLIENT_NAMES = new Set(['pg', 'postgres', 'postgresql']);

async function runHot(db: Executor, statement: HotStatement, values: Knex.RawBinding[]) {
  const client = db.client as Knex.Client;
  const clientName = client.config?.client;
  if (
    typeof clientName !== 'string' ||
    !PG_CLIENT_NAMES.has(clientName) ||
    (db as Knex.Transaction).isTransaction
  ) {
    return (await db.raw(statement.sql, values)) as { rows: unknown[] };
  }
  const connection = (await client.acquireConnection()) as PgConnection;
  try {
    return await connection.query({ name: statement.name, text: statement.pgSql, values });
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * `write` as a group commit (platform/group-commit.ts), one per database handle (each test opens
 * its own); inside a transaction an item is a statement of that transaction, alone.
 */
function groupedWrites<Item, Result>(
  write: (db: Executor, items: readonly Item[]) => Promise<Result[]>,
  options: { sizeOf: (item: Item) => number; keyOf?: (item: Item) => string },
): (db: Executor, item: Item) => Promise<Result> {
  const perDatabase = new WeakMap<Knex, (item: Item) => Promise<Result>>();
  return async (db, item) => {
    if ((db as Knex.Transaction).isTransaction) return (await write(db, [item]))[0] as Result;
    const knex = db as Knex;
    let grouped = perDatabase.get(knex);
    if (!grouped) {
      grouped = createGroupCommit((items: readonly Item[]) => write(knex, items), options);
      perDatabase.set(knex, grouped);
    }
    return grouped(item);
  };
}

/** The characters of a value held as text (JSON), 0 for anything else: a batch's size. */
const textLength = (value: unknown) => (typeof value === 'string' ? value.length : 0);

/**
 * Writes a new execution; with `event`, appends that event to the event log in the same
 * statement (one round trip instead of a four-statement transaction).
 */
export async function insertExecution(
  db: Executor,
  row: NewExecution,
  event?: { stream: string; name: string; payload: object },
): Promise<ExecutionRow> {
  if (!event) {
    return (await db.raw(INSERT_SQL, insertValues(row))).rows[0] as ExecutionRow;
  }
  const result = await db.raw(INSERT_WITH_EVENT_SQL, [
    ...insertValues(row),
    event.stream,
    event.name,
    JSON.stringify(event.payload),
  ]);
  return result.rows[0] as ExecutionRow;
}

/** How a batched insert reads each of INSERT_COLUMNS from its JSON record; any other column is text. */
const INSERT_TYPES: Partial<Record<(typeof INSERT_COLUMNS)[number], string>> = {
  webhook_registered: 'boolean',
  depth: 'integer',
  dispatch_count: 'integer',
  available_at: 'timestamptz',
  created_at: 'timestamptz',
  started_at: 'timestamptz',
  dispatched_at: 'timestamptz',
  accepted_at: 'timestamptz',
  updated_at: 'timestamptz',
};
/** Columns whose values come as JSON text (as insertValues gives them), cast when inserted. */
const JSON_COLUMNS = new Set(['input', 'webhook']);

/**
 * New executions, each with its event when it has one, in one statement for a batch of them:
 * each record holds INSERT_COLUMNS' values as insertValues gives them, and `event_stream`,
 * `event_name` and `event_payload` (text), null when it has no event. An event is only written if
 * its row was.
 */
const RECORD_EXECUTIONS = hotStatement(
  'record_executions',
  `with input as (
       select * from jsonb_to_recordset(?::jsonb)
         as r(${INSERT_COLUMNS.map((column) => `${column} ${INSERT_TYPES[column] ?? 'text'}`).join(', ')},
              event_stream text, event_name text, event_payload text))
     , inserted as (
       insert into executions (${INSERT_COLUMNS.join(', ')})
       select ${INSERT_COLUMNS.map((column) => (JSON_COLUMNS.has(column) ? `${column}::jsonb` : column)).join(', ')}
         from input
       returning execution_id)
     , logged as (
       insert into event_log (stream, event, payload)
       select i.event_stream, i.event_name, i.event_payload::jsonb
         from inserted join input i using (execution_id)
        where i.event_name is not null)
     select execution_id from inserted`,
);

type RecordItem = Record<string, unknown>;

async function recordAll(db: Executor, items: readonly RecordItem[]): Promise<undefined[]> {
  const { rows } = await runHot(db, RECORD_EXECUTIONS, [JSON.stringify(items)]);
  if (rows.length !== items.length) throw new Error(`wrote ${rows.length} of ${items.length} executions`);
  return items.map(() => undefined);
}

const recordGrouped = groupedWrites(recordAll, {
  sizeOf: (item) => textLength(item.input) + textLength(item.webhook) + textLength(item.event_payload),
});

/**
 * Writes a new execution, with its event when given, and hands nothing back: the caller holds
 * every value it wrote. Every submission and every sync call runs it, so it is prepared once per
 * connection, and writes that come while earlier ones are on their way go together (group
 * commit, see platform/group-commit.ts); it resolves once its row is committed. Throws when the
 * row could not be written.
 */
async function writeExecution(
  db: Executor,
  row: NewExecution,
  event?: { stream: string; name: string; payload: object },
): Promise<void> {
  const values = insertValues(row);
  const item: RecordItem = Object.fromEntries(INSERT_COLUMNS.map((column, i) => [column, values[i]]));
  item.event_stream = event?.stream ?? null;
  item.event_name = event?.name ?? null;
  item.event_payload = event ? JSON.stringify(event.payload) : null;
  await recordGrouped(db, item);
}

/** Writes a new queued execution (an async submission); see writeExecution. */
export async function insertQueued(db: Executor, row: NewExecution & { status: 'queued' }): Promise<void> {
  await writeExecution(db, row);
}

/** Writes a new execution and its event in one statement (the sync lane); see writeExecution. */
export async function recordExecution(
  db: Executor,
  row: NewExecution,
  event: { stream: string; name: string; payload: object },
): Promise<void> {
  await writeExecution(db, row, event);
}

export async function findExecution(db: Executor, id: string): Promise<ExecutionRow | undefined> {
  return (await db<ExecutionRow>(TABLE).where({ execution_id: id }).first()) as ExecutionRow | undefined;
}

/** Every column a status record shows, without the input (records never show it). */
const RECORD_COLUMNS = [
  'execution_id',
  'run_id',
  'workflow_id',
  'parent_execution_id',
  'target',
  'node_id',
  'function_type',
  'status',
  'error',
  'progress',
  'routed_version',
  'webhook_registered',
  'webhook_error',
  'created_at',
  'started_at',
  'completed_at',
  'duration_ms',
  'waiting_for',
];

/**
 * Record columns for reads of many executions at once, where a result or error detail larger
 * than `maxBytes` is left out (and flagged): one answer must not carry gigabytes of results.
 */
function cappedRecordColumns(db: Executor, maxBytes: number) {
  return [
    ...RECORD_COLUMNS,
    db.raw('case when octet_length(result::text) > ? then null else result end as result', [maxBytes]),
    db.raw('coalesce(octet_length(result::text) > ?, false) as result_truncated', [maxBytes]),
    db.raw(
      'case when octet_length(error_details::text) > ? then null else error_details end as error_details',
      [maxBytes],
    ),
  ];
}

/** Records of several executions; results over `maxBytes` are left out (see cappedRecordColumns). */
export async function findExecutions(db: Executor, ids: string[], maxBytes: number): Promise<ExecutionRow[]> {
  return (await db(TABLE)
    .select(cappedRecordColumns(db, maxBytes))
    .whereIn('execution_id', ids)) as ExecutionRow[];
}

/** The parent of a child call, for its workflow and depth. */
export async function findParent(db: Executor, id: string) {
  return db(TABLE).select('workflow_id', 'run_id', 'depth').where({ execution_id: id }).first() as Promise<
    { workflow_id: string; run_id: string; depth: number } | undefined
  >;
}

export async function countQueued(db: Executor): Promise<number> {
  const row = await db(TABLE).where({ status: 'queued' }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/**
 * Executions an agent instance may still be working on (the shutdown drain waits for them). A
 * `waiting` one is not: it waits for a person, for hours, and the agent holds no work for it
 * until the decision comes; a drain waiting for it would only run into its timeout.
 */
export async function countActive(db: Executor, nodeId: string, version: string): Promise<number> {
  const row = await db(TABLE)
    .where({ node_id: nodeId, routed_version: version, status: 'running' })
    .count({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
}

/**
 * Claims up to `limit` queued executions that are due, oldest first, for one replica. FOR UPDATE
 * SKIP LOCKED lets every replica claim from the one queue at once without waiting on each other
 * and without two of them ever claiming the same row; the claim is committed before any agent is
 * called, so a claim is never lost, only (after a crash) recovered.
 */
export async function claimQueued(
  db: Executor,
  replicaId: string,
  limit: number,
  now: Date,
  fairness: { perNode: number; rooms: Map<string, number> },
): Promise<ExecutionRow[]> {
  // Oldest due first, but no node gets more than its room (the per-node cap less the calls
  // already open to it here): a node at its cap is skipped so the executions of the other
  // nodes queued behind its backlog are claimed. The candidates are read a few batches deep so
  // a node with room for only a few still leaves the rest of the batch to the others.
  const rooms = JSON.stringify([...fairness.rooms].map(([node, room]) => ({ node, room })));
  const result = await db.raw(
    `with room as (
       select node, room from jsonb_to_recordset(?::jsonb) as r(node text, room int)),
     candidates as (
       select execution_id, node_id, available_at, created_at from executions
        where status = 'queued' and available_at <= ?
          and node_id not in (select node from room where room <= 0)
        order by available_at, created_at
        limit ? for update skip locked),
     due as (
       select execution_id from (
         select c.execution_id, c.available_at, c.created_at,
                row_number() over (partition by c.node_id order by c.available_at, c.created_at) as nth,
                coalesce(room.room, ?) as room
           from candidates c left join room on room.node = c.node_id) ranked
        where nth <= room
        order by available_at, created_at
        limit ?)
     update executions e
        set status = 'running', dispatched_by = ?, dispatch_count = e.dispatch_count + 1,
            accepted_at = null, dispatched_at = ?, updated_at = ?
       from due where e.execution_id = due.execution_id
     returning e.*`,
    [rooms, now, limit * 4, fairness.perNode, limit, replicaId, now, now],
  );
  return result.rows as ExecutionRow[];
}

/**
 * Puts claimed executions back in the queue, not to be dispatched before `availableAt`. With
 * `unsent`, the claim did not count as a dispatch (nothing was routable, nothing was sent).
 */
export async function requeue(
  db: Executor,
  ids: string[],
  availableAt: Date,
  now: Date,
  options: { unsent?: boolean } = {},
): Promise<void> {
  if (ids.length === 0) return;
  await db(TABLE)
    .whereIn('execution_id', ids)
    .where({ status: 'running' })
    .update({
      status: 'queued',
      available_at: availableAt,
      dispatched_by: null,
      updated_at: now,
      ...(options.unsent ? { dispatch_count: db.raw('greatest(0, dispatch_count - 1)') } : {}),
    });
}

/**
 * Records the instance each dispatched execution goes to (the execution starts now) and appends
 * its `execution.started` event, in one statement for the whole batch.
 */
export async function recordRoutes(
  db: Executor,
  routes: Array<{ id: string; version: string; baseUrl: string; event: object }>,
  stream: string,
  now: Date,
): Promise<void> {
  if (routes.length === 0) return;
  await db.raw(
    `with routed as (
       update executions e
          set routed_version = r.version, agent_base_url = r.base_url, started_at = coalesce(e.started_at, ?)
         from jsonb_to_recordset(?::jsonb) as r(id text, version text, base_url text, event jsonb, n int)
        where e.execution_id = r.id
        returning r.event, r.n)
     insert into event_log (stream, event, payload)
     select ?, 'execution.started', event from routed order by n`,
    [
      now,
      JSON.stringify(
        routes.map((r, n) => ({ id: r.id, version: r.version, base_url: r.baseUrl, event: r.event, n })),
      ),
      stream,
    ],
  );
}

/**
 * Marks executions the agents took (answered 202): from now on only the agents report on them.
 * The rows are locked in the order of their ids, as batched ends lock them (finishManySql).
 * Left to the planner, a list of ids was locked in the table's order, and an agent that reports
 * as soon as it has answered 202 had its end wait on this statement while this one waited on
 * the end: a deadlock, which PostgreSQL breaks only after `deadlock_timeout` (a second).
 */
export async function markAccepted(db: Executor, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.raw(
    `with taken as materialized (
       select execution_id from executions
        where execution_id = any(?::text[]) and status = 'running' and accepted_at is null
        order by execution_id
        for update)
     update executions e set accepted_at = ? from taken where e.execution_id = taken.execution_id`,
    [ids, now],
  );
}

/**
 * A `running` report: its progress when it has one, and a sign of life either way (see
 * findSilent). Returns the row, or undefined when the execution is not active (or unknown).
 */
export async function recordProgress(
  db: Executor,
  id: string,
  progress: number | undefined,
  now: Date,
): Promise<ExecutionRow | undefined> {
  const [row] = await db(TABLE)
    .where({ execution_id: id })
    .whereIn('status', ['running', 'queued'])
    .update({
      ...(progress === undefined ? {} : { progress }),
      // A report from the agent proves it has the execution, as its 202 would have.
      accepted_at: db.raw('coalesce(accepted_at, ?)', [now]),
      updated_at: now,
    })
    .returning(RETURNED);
  return row as ExecutionRow | undefined;
}

/** The execution, locked for the rest of the transaction (or undefined when another holds it, with skipLocked). */
export async function findExecutionForUpdate(
  trx: Knex.Transaction,
  id: string,
  options: { skipLocked?: boolean } = {},
): Promise<ExecutionRow | undefined> {
  const query = trx<ExecutionRow>(TABLE).where({ execution_id: id }).forUpdate();
  if (options.skipLocked) query.skipLocked();
  return (await query.first()) as ExecutionRow | undefined;
}

/**
 * running (or awaiting a child) → waiting. The pause call comes from the agent, so it also proves the agent has the
 * execution (as its 202 would: `accepted_at`), which keeps the orphan recovery away from it
 * once it runs again.
 */
export async function pauseRunning(
  db: Executor,
  id: string,
  waitingFor: WaitingFor,
  now: Date,
): Promise<ExecutionRow | undefined> {
  const [row] = await db(TABLE)
    .where({ execution_id: id })
    .where((running) =>
      // A parent awaiting a child is still at work: it may pause for an approval of its own.
      running
        .where({ status: 'running' })
        .orWhere((awaiting) =>
          awaiting.where({ status: 'waiting' }).whereRaw(`waiting_for->>'type' = 'child'`),
        ),
    )
    .update({
      status: 'waiting',
      waiting_for: JSON.stringify(waitingFor),
      accepted_at: db.raw('coalesce(accepted_at, ?)', [now]),
      updated_at: now,
    })
    .returning(RETURNED);
  return row as ExecutionRow | undefined;
}

/**
 * waiting (for this approval request) → running, waiting_for cleared. `updated_at` moves, so the
 * max_silence rule counts the agent's silence from the decision, not from before the pause.
 */
export async function resumeWaiting(
  db: Executor,
  id: string,
  approvalRequestId: string,
  now: Date,
): Promise<ExecutionRow | undefined> {
  const [row] = await db(TABLE)
    .where({ execution_id: id, status: 'waiting' })
    .whereRaw(`waiting_for->>'approval_request_id' = ?`, [approvalRequestId])
    .update({ status: 'running', waiting_for: null, updated_at: now })
    .returning(RETURNED);
  return row as ExecutionRow | undefined;
}

/** running → waiting for a child. Undefined unless it was running. */
export async function awaitChild(
  db: Executor,
  id: string,
  waitingFor: WaitingFor,
  now: Date,
): Promise<ExecutionRow | undefined> {
  const [row] = await db(TABLE)
    .where({ execution_id: id, status: 'running' })
    .update({ status: 'waiting', waiting_for: JSON.stringify(waitingFor), updated_at: now })
    .returning(RETURNED);
  return row as ExecutionRow | undefined;
}

/** waiting for a child → running, waiting_for cleared. Undefined unless it waited for a child. */
export async function resumeFromChild(
  db: Executor,
  id: string,
  now: Date,
): Promise<ExecutionRow | undefined> {
  const [row] = await db(TABLE)
    .where({ execution_id: id, status: 'waiting' })
    .whereRaw(`waiting_for->>'type' = 'child'`)
    .update({ status: 'running', waiting_for: null, updated_at: now })
    .returning(RETURNED);
  return row as ExecutionRow | undefined;
}

/** The terminal outcome of an execution. */
export interface Outcome {
  status: TerminalStatus;
  result?: unknown;
  error?: string | null;
  errorDetails?: unknown;
}

const FINISH_SET = `set status = ?, result = ?::jsonb, error = ?, error_details = ?::jsonb,
            completed_at = ?, updated_at = ?,
            duration_ms = greatest(0, extract(epoch from (?::timestamptz - coalesce(started_at, created_at))) * 1000),
            progress = case when ? = 'succeeded' then 100 else progress end`;

function finishBindings(outcome: Outcome, now: Date) {
  return [
    outcome.status,
    outcome.result === undefined ? null : JSON.stringify(outcome.result),
    outcome.error ?? null,
    outcome.errorDetails === undefined || outcome.errorDetails === null
      ? null
      : JSON.stringify(outcome.errorDetails),
    now,
    now,
    now,
    outcome.status,
  ];
}

/**
 * Moves an execution to a terminal state, once: the update only matches while the execution is
 * still active, so a repeated callback, a cancel racing a result, or two replicas racing each
 * other change it exactly once. Returns the finished row, or undefined when it had already ended.
 */
export async function finishExecution(
  db: Executor,
  id: string,
  outcome: Outcome,
  now: Date,
): Promise<ExecutionRow | undefined> {
  const result = await db.raw(
    `update executions ${FINISH_SET}
      where execution_id = ? and status in ('queued', 'running', 'waiting')
      returning ${RETURNED_SQL}`,
    [...finishBindings(outcome, now), id],
  );
  return result.rows[0] as ExecutionRow | undefined;
}

/**
 * What ending an execution hands back to a caller that does not answer with the whole record:
 * what the finisher's after-commit work and a synchronous call's answer read. A third of the
 * columns: `pg` builds a parser for every column of every answer and parses each value, which
 * was a few percent of the control plane's thread per execution on the lanes' hot path.
 */
export const FINISHED_COLUMNS = [
  'execution_id',
  'run_id',
  'workflow_id',
  'node_id',
  'function_type',
  'lane',
  'status',
  'result',
  'error',
  'error_details',
  'webhook',
  'depth',
  'dispatched_by',
  'accepted_at',
  'completed_at',
  'duration_ms',
] as const satisfies ReadonlyArray<keyof ExecutionRow>;
export type FinishedRow = Pick<ExecutionRow, (typeof FINISHED_COLUMNS)[number]>;

/** The end of an execution without a webhook and its event, handing back `columns` of the row. */
const finishOneSql = (columns: string) =>
  `with done as (
       update executions ${FINISH_SET}
        where execution_id = ? and status in ('queued', 'running', 'waiting') and webhook is null
          and waiting_for is null
        returning ${RETURNED_SQL})
     , logged as (
       insert into event_log (stream, event, payload)
       select ?, 'execution.completed', ${completedPayloadSql('', '?::text')}
         from done)
     select ${columns} from done`;

const END_FIELDS = ['execution_id', 'status', 'result', 'error', 'error_details', 'at', 'stream'] as const;
type EndItem = Record<(typeof END_FIELDS)[number], string | null> & { execution_id: string };

/**
 * The same for several executions, from one array parameter per END_FIELDS field (JSON values as
 * text, so that they are stored exactly as finishExecution stores them). Not prepared: a plan made
 * once keeps the join the table's size called for when it was made (a hash over all of it, on a
 * table that has grown since); planned each time, it looks each execution up by its key. The
 * status test is kept out of the status index's reach (`is true`), which the planner otherwise
 * takes whenever its statistics lag a burst of new executions, reading every active one.
 *
 * The rows are locked first, in the order of their ids (`locked`), as markAccepted locks them:
 * two statements over some of the same executions (this one and the dispatcher's, or another
 * replica's) then wait for each other instead of deadlocking. The update alone locks them in
 * whatever order its plan reads them, which on a table of a few thousand rows is the table's own.
 */
const finishManySql = (columns: string) =>
  `with input as (
       select * from unnest(${END_FIELDS.map(() => '?::text[]').join(', ')}) as r(${END_FIELDS.join(', ')}))
     , locked as materialized (
       select e.execution_id from executions e
        where e.execution_id in (select execution_id from input)
          and (e.status in ('queued', 'running', 'waiting')) is true and e.webhook is null and e.waiting_for is null
        order by e.execution_id
        for update of e)
     , done as (
       update executions e
          set status = i.status, result = i.result::jsonb, error = i.error, error_details = i.error_details::jsonb,
              completed_at = i.at::timestamptz, updated_at = i.at::timestamptz,
              duration_ms = greatest(0, extract(epoch from (i.at::timestamptz - coalesce(e.started_at, e.created_at))) * 1000),
              progress = case when i.status = 'succeeded' then 100 else e.progress end
         from locked l join input i using (execution_id)
        where e.execution_id = l.execution_id
        returning ${RETURNED.map((column) => `e.${column}`).join(', ')})
     , logged as (
       insert into event_log (stream, event, payload)
       select i.stream, 'execution.completed', ${completedPayloadSql('d.', 'i.at')}
         from done d join input i using (execution_id))
     select ${columns} from done`;

/** The `execution.completed` payload of a row of `done` (columns prefixed `row`), ended at `at`. */
function completedPayloadSql(row: string, at: string): string {
  return `jsonb_build_object('execution_id', ${row}execution_id, 'target', ${row}target, 'workflow_id', ${row}workflow_id,
                                 'run_id', ${row}run_id, 'timestamp', ${at}, 'status', ${row}status,
                                 'duration_ms', round(${row}duration_ms)::bigint)
              || case when ${row}status <> 'succeeded' and nullif(${row}error, '') is not null
                      then jsonb_build_object('error_message', ${row}error) else '{}'::jsonb end`;
}

interface EndStatements {
  one: HotStatement;
  many: string;
}
const FINISH_WITHOUT_WEBHOOK: EndStatements = {
  one: hotStatement('finish_without_webhook', finishOneSql('*')),
  many: finishManySql('*'),
};
const FINISH_WITHOUT_WEBHOOK_LEAN: EndStatements = {
  one: hotStatement('finish_without_webhook_lean', finishOneSql(FINISHED_COLUMNS.join(', '))),
  many: finishManySql(FINISHED_COLUMNS.join(', ')),
};

/**
 * finishExecution and its `execution.completed` event in one statement, for executions without
 * a webhook (the common case, on the hot path of every result): one round trip instead of a
 * four-statement transaction, and under load one for many executions (group commit: ends that
 * come while earlier ones are being written go together). The payload is the one events.ts
 * `completedPayload` builds, built here in SQL because it needs the duration the update
 * computes; test/execution-events.test.ts holds the two to the same shape. Undefined when the
 * execution had ended, does not exist, has a webhook, or ends while waiting for an approval (the
 * caller then finishes it in a transaction with the webhook delivery and the approval request's
 * end). Inside a transaction it is a statement of that transaction, alone.
 */
export const finishWithoutWebhook = endWithoutWebhook<ExecutionRow>(FINISH_WITHOUT_WEBHOOK);

/** finishWithoutWebhook handing back only FINISHED_COLUMNS. */
export const finishWithoutWebhookLean = endWithoutWebhook<FinishedRow>(FINISH_WITHOUT_WEBHOOK_LEAN);

function endWithoutWebhook<Row extends { execution_id: string }>(statements: EndStatements) {
  async function end(db: Executor, items: readonly EndItem[]): Promise<Array<Row | undefined>> {
    const { rows } =
      items.length === 1
        ? await runHot(db, statements.one, oneBindings(items[0] as EndItem))
        : await db.raw(
            statements.many,
            END_FIELDS.map((field) => items.map((item) => item[field])) as Knex.RawBinding[],
          );
    const ended = new Map((rows as Row[]).map((row) => [row.execution_id, row]));
    return items.map((item) => ended.get(item.execution_id));
  }
  const endGrouped = groupedWrites(end, {
    keyOf: (item) => item.execution_id,
    sizeOf: (item) => textLength(item.result) + textLength(item.error) + textLength(item.error_details),
  });
  // finishOneSql's parameters: FINISH_SET's (as finishBindings gives them), the key, the event's.
  const oneBindings = (item: EndItem) => [
    item.status,
    item.result,
    item.error,
    item.error_details,
    item.at,
    item.at,
    item.at,
    item.status,
    item.execution_id,
    item.stream,
    item.at,
  ];
  return async (
    db: Executor,
    id: string,
    outcome: Outcome,
    stream: string,
    now: Date,
  ): Promise<Row | undefined> => {
    const [status, result, error, errorDetails] = finishBindings(outcome, now);
    const item: EndItem = {
      execution_id: id,
      status: status as string,
      result: result as string | null,
      error: error as string | null,
      error_details: errorDetails as string | null,
      at: now.toISOString(),
      stream,
    };
    return endGrouped(db, item);
  };
}

/**
 * Executions claimed by a replica that has stopped (its lease ended), which the agent had not
 * acknowledged. One never routed was never sent: it is recovered as soon as its replica is gone.
 * One routed may have reached the agent, whose 202 died with the replica: it is recovered only
 * once its replica has been gone for `graceMs`, so an agent working on it can report first (its
 * status callbacks retry). Locked, so one replica recovers each. A replica's own claims are
 * orphans only when no call of this process is working on them (`inFlight`) and they have been
 * still for `graceMs`: a claim whose forwarding failed half-way (a database error at the wrong
 * moment) must not wait for the process to end.
 */
export async function claimOrphans(
  db: Executor,
  self: { id: string; inFlight: string[] },
  now: Date,
  graceMs: number,
  limit: number,
): Promise<ExecutionRow[]> {
  const result = await db.raw(
    `select e.* from executions e
      where e.status = 'running' and e.accepted_at is null and e.dispatched_by is not null
        and (
          (e.dispatched_by <> ?
           and not exists (
             select 1 from control_plane_replicas r
              where r.replica_id = e.dispatched_by
                and r.lease_expires_at > ?::timestamptz
                    - (case when e.started_at is null then 0 else ? end) * interval '1 millisecond'))
          or (e.dispatched_by = ? and not (e.execution_id = any(?::text[]))
              and e.updated_at < ?::timestamptz - ? * interval '1 millisecond'))
      order by e.updated_at
      limit ? for update of e skip locked`,
    [self.id, now, graceMs, self.id, self.inFlight, now, graceMs, limit],
  );
  return result.rows as ExecutionRow[];
}

/**
 * Running executions whose instance is gone: offline (no heartbeat within its lease), evicted,
 * unregistered, or registered again since it took the execution (the agent process restarted;
 * SDKs register only at start). "Since" means more than 5 s after the execution was sent or
 * acknowledged: replicas' clocks differ a little, and an agent may take work a moment before its
 * registration completes. An agent that took one (202) will not report on it any more; one
 * still holding the call open has stopped heartbeating, and its answer is not waited for.
 */
export async function findAbandoned(
  db: Executor,
  limit: number,
): Promise<Array<ExecutionRow & { node_state: string | null; agent_registered_at: Date | string | null }>> {
  const result = await db.raw(
    `select e.*, n.lifecycle_status as node_state, n.last_registered_at as agent_registered_at
       from executions e
       left join node_instances n
         on n.node_id = e.node_id and n.version = e.routed_version and n.evicted_at is null
      where e.status = 'running' and e.routed_version is not null
        and (n.node_id is null or n.lifecycle_status = 'offline'
             or n.last_registered_at > coalesce(e.accepted_at, e.dispatched_at) + interval '5 seconds')
      order by e.updated_at
      limit ?`,
    [limit],
  );
  return result.rows;
}

/**
 * Executions an agent took (202) and has not reported on since `before` (no progress, no
 * outcome): the agent's status callback was lost, for example while the control plane was down
 * longer than the SDK kept retrying.
 */
export async function findSilent(db: Executor, before: Date, limit: number): Promise<ExecutionRow[]> {
  return (await db<ExecutionRow>(TABLE)
    .where({ status: 'running' })
    .whereNotNull('accepted_at')
    .where('accepted_at', '<', before)
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)) as ExecutionRow[];
}

export interface ListFilter {
  status?: ExecutionStatus;
  target?: string;
  workflowId?: string;
  nodeId?: string;
  since?: Date;
  /** Keyset position: rows strictly older than (createdAt, id). */
  before?: { createdAt: Date; id: string };
  limit: number;
  /** Results and error details larger than this are left out of the page. */
  maxResultBytes: number;
}

/** Newest first; `limit + 1` rows are read so the caller knows whether there is a next page. */
export async function listExecutions(db: Executor, filter: ListFilter): Promise<ExecutionRow[]> {
  const query = db(TABLE).select(cappedRecordColumns(db, filter.maxResultBytes));
  if (filter.status) query.where('status', filter.status);
  if (filter.target) query.where('target', filter.target);
  if (filter.workflowId) query.where('workflow_id', filter.workflowId);
  if (filter.nodeId) query.where('node_id', filter.nodeId);
  if (filter.since) query.where('created_at', '>=', filter.since);
  if (filter.before) {
    query.whereRaw('(created_at, execution_id) < (?, ?)', [filter.before.createdAt, filter.before.id]);
  }
  return (await query
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'execution_id', order: 'desc' },
    ])
    .limit(filter.limit + 1)) as ExecutionRow[];
}

/** The executions of one workflow, for its DAG: only the columns the DAG shows. */
export async function workflowExecutions(db: Executor, workflowId: string, limit: number) {
  return db(TABLE)
    .select(
      'execution_id',
      'parent_execution_id',
      'node_id',
      'target',
      'status',
      'duration_ms',
      'depth',
      'run_id',
      'created_at',
      'started_at',
      'completed_at',
    )
    .where({ workflow_id: workflowId })
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'execution_id', order: 'asc' },
    ])
    .limit(limit + 1);
}

/**
 * What each execution of a workflow took and gave, as the run bundle previews it: the input and
 * result as pretty JSON cut to `chars + 1` characters (one over, so the caller sees the cut), the
 * error text likewise. PostgreSQL pretty-prints and cuts, so a result of megabytes never leaves
 * the database; jsonb_pretty indents by four spaces and orders keys as jsonb stores them.
 */
export async function workflowPayloads(db: Executor, workflowId: string, chars: number, limit: number) {
  return (await db(TABLE)
    .select(
      'execution_id',
      'function_name',
      db.raw('left(jsonb_pretty(input), ?) as input_text', [chars + 1]),
      db.raw('left(jsonb_pretty(result), ?) as result_text', [chars + 1]),
      db.raw('left(error, ?) as error_text', [chars + 1]),
    )
    .where({ workflow_id: workflowId })
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'execution_id', order: 'asc' },
    ])
    .limit(limit)) as Array<{
    execution_id: string;
    function_name: string;
    input_text: string | null;
    result_text: string | null;
    error_text: string | null;
  }>;
}
