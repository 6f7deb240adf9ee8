import { openDatabase, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTIONS_STREAM } from '../src/modules/executions/events.ts';
import { finishWithoutWebhook, markAccepted } from '../src/modules/executions/repository.ts';
import { degradeStuckStarting } from '../src/modules/nodes/repository.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';

const databaseUrl = process.env.DATABASE_URL;

let handle: TestDatabase;
let counter = 0;

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
});

afterAll(async () => {
  await handle?.close();
});

/** A running execution, just forwarded to its agent and not yet taken. */
async function running(id: string): Promise<void> {
  const now = new Date();
  await handle.db('executions').insert({
    execution_id: id,
    run_id: `run_${id}`,
    workflow_id: `run_${id}`,
    target: 'hello-agent.summarize',
    node_id: 'hello-agent',
    function_name: 'summarize',
    function_type: 'reasoner',
    lane: 'async',
    status: 'running',
    input: JSON.stringify({ text: 'x' }),
    dispatched_by: 'replica_test',
    dispatch_count: 1,
    available_at: now,
    created_at: now,
    dispatched_at: now,
    updated_at: now,
  });
}

/** Resolves once `count` statements on this database (with `text` in them) wait for a row lock. */
async function someoneWaits(count = 1, text = ''): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await handle.db.raw(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and strpos(query, ?) > 0`,
      [text],
    );
    if (rows[0].n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no statement came to wait for a lock');
}

/**
 * Statements that change several executions lock them in the order of their ids, whatever plan
 * PostgreSQL picks, so two of them over the same executions wait for each other instead of
 * deadlocking. The case that did deadlock: an agent answers 202 and reports its result at once;
 * the end of the execution (batched, in id order) and the mark that the agent took it (batched
 * by the dispatcher) then meet on the same rows.
 */
describe.runIf(databaseUrl)('lock order of batched execution writes (needs DATABASE_URL)', () => {
  it('marks executions taken without deadlocking an end that holds one of them, whichever plan reads the rows', async () => {
    counter += 1;
    // The table's order is the reverse of the ids' order: the later id is written first.
    const first = `exec_lock_${process.pid}_${counter}_a`;
    const second = `exec_lock_${process.pid}_${counter}_b`;
    await running(second);
    await running(first);

    // An end of both, in id order, has locked the first and is about to lock the second.
    const end = await handle.db.transaction();
    const endedAt = new Date();
    try {
      await end('executions')
        .where({ execution_id: first })
        .update({ status: 'succeeded', completed_at: endedAt, updated_at: endedAt });

      // The agents' 202s are recorded meanwhile, on a plan that reads the table in its own order.
      const marking = handle.db.transaction(async (trx) => {
        await trx.raw('set local enable_indexscan = off');
        await trx.raw('set local enable_bitmapscan = off');
        await markAccepted(trx, [second, first], new Date());
      });
      const marked = marking.then(
        () => 'marked',
        (error: Error) => error.message,
      );
      await someoneWaits();

      await end('executions')
        .where({ execution_id: second })
        .update({ status: 'succeeded', completed_at: endedAt, updated_at: endedAt });
      await end.commit();
      expect(await marked).toBe('marked');
    } finally {
      if (!end.isCompleted()) await end.rollback();
    }

    // Both ended before the mark could take them: nothing is marked taken after its end.
    const rows = await handle
      .db('executions')
      .whereIn('execution_id', [first, second])
      .orderBy('execution_id')
      .select('status', 'accepted_at');
    expect(rows).toEqual([
      { status: 'succeeded', accepted_at: null },
      { status: 'succeeded', accepted_at: null },
    ]);
  });

  it('ends several executions at once without deadlocking a writer that holds one of them, whichever plan reads the rows', async () => {
    counter += 1;
    const id = (name: string) => `exec_lock_${process.pid}_${counter}_${name}`;
    // The table's order is the reverse of the ids' order: the later id is written first.
    for (const name of ['b', 'a']) await running(id(name));
    // A connection of its own, on which the planner reads the table in its own order.
    const { rows } = await handle.db.raw('select current_database() as name');
    const url = new URL(databaseUrl!);
    url.pathname = `/${rows[0].name}`;
    await handle.db.raw(`alter database "${rows[0].name}" set enable_indexscan = off`);
    await handle.db.raw(`alter database "${rows[0].name}" set enable_bitmapscan = off`);
    // A deadlock is then found by the other writer (after its one second) and fails it, rather
    // than failing the batch, which group commit would write again item by item.
    await handle.db.raw(`alter database "${rows[0].name}" set deadlock_timeout = '20s'`);
    const ends = await openDatabase({ url: url.toString(), poolMax: 2 });
    // A writer that takes a and b in id order, as the dispatcher's mark does, has taken a.
    const mark = await handle.db.transaction();
    const end = (name: string) =>
      finishWithoutWebhook(
        ends,
        id(name),
        { status: 'succeeded', result: { ok: name } },
        EXECUTIONS_STREAM,
        new Date(),
      ).then(
        (row) => row?.status,
        (error: Error) => error.message,
      );
    try {
      await mark('executions')
        .where({ execution_id: id('a') })
        .update({ progress: 2 });
      // Both ends come at once: one statement ends both.
      const ended = [end('a'), end('b')];
      await someoneWaits(1, 'unnest');

      await mark('executions')
        .where({ execution_id: id('b') })
        .update({ progress: 2 });
      await mark.commit();
      expect(await Promise.all(ended)).toEqual(['succeeded', 'succeeded']);
    } finally {
      if (!mark.isCompleted()) await mark.rollback();
      await ends.destroy();
      // Connections the file opens from now on plan and wait as usual again.
      await handle.db.raw(`alter database "${rows[0].name}" reset all`);
    }
  });
});

/**
 * The health monitor's sweeps run on every replica at once and can meet on the same instances
 * (an instance stuck in `starting` whose lease also ran out is both degraded and expired): they
 * lock them in key order too.
 */
describe.runIf(databaseUrl)('lock order of node sweeps (needs DATABASE_URL)', () => {
  /** An instance stuck in `starting`, its lease run out an hour ago. */
  async function stuck(nodeId: string): Promise<void> {
    const hourAgo = new Date(Date.now() - 3_600_000);
    await handle.db('node_instances').insert({
      node_id: nodeId,
      version: '1.0.0',
      base_url: 'http://127.0.0.1:9',
      deployment_type: 'long_running',
      tags: JSON.stringify([]),
      metadata: JSON.stringify({}),
      reasoners: JSON.stringify([]),
      skills: JSON.stringify([]),
      lifecycle_status: 'starting',
      status_reason: 'registered',
      status_changed_at: hourAgo,
      lease_expires_at: hourAgo,
      last_seen_at: hourAgo,
      registered_at: hourAgo,
      updated_at: hourAgo,
    });
  }

  it('degrades stuck instances without deadlocking another sweep that holds one of them, whichever plan reads the rows', async () => {
    counter += 1;
    const first = `sweep-${process.pid}-${counter}-a`;
    const second = `sweep-${process.pid}-${counter}-b`;
    // The table's order is the reverse of the keys' order.
    await stuck(second);
    await stuck(first);

    // Another replica's sweep, in key order, has locked the first and is about to lock the second.
    const other = await handle.db.transaction();
    try {
      await other('node_instances').where({ node_id: first }).increment('revision', 1);
      const degrading = handle.db.transaction(async (trx) => {
        await trx.raw('set local enable_indexscan = off');
        await trx.raw('set local enable_bitmapscan = off');
        return degradeStuckStarting(trx, new Date(Date.now() - 60_000), new Date());
      });
      const degraded = degrading.then(
        (records) => records.map((record) => record.nodeId).sort(),
        (error: Error) => error.message,
      );
      await someoneWaits();

      await other('node_instances').where({ node_id: second }).increment('revision', 1);
      await other.commit();
      expect(await degraded).toEqual([first, second]);
    } finally {
      if (!other.isCompleted()) await other.rollback();
    }
  });
});

describe('marking executions taken', () => {
  it('marks running executions taken, and only those', async () => {
    counter += 1;
    const ids = [0, 1, 2].map((n) => `exec_lock_${process.pid}_${counter}_${n}`);
    for (const id of ids) await running(id);
    await handle.db('executions').where({ execution_id: ids[2] }).update({ status: 'cancelled' });
    const at = new Date('2026-12-03T12:00:00.000Z');

    await markAccepted(handle.db, [...ids, `exec_lock_${process.pid}_unknown`], at);

    const rows = await handle.db('executions').whereIn('execution_id', ids).orderBy('execution_id');
    expect(rows.map((row) => row.accepted_at?.toISOString() ?? null)).toEqual([
      at.toISOString(),
      at.toISOString(),
      null,
    ]);
  });
});
