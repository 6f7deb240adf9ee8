/**
 * Many replicas on one PostgreSQL: SIGKILL of one replica mid-load loses nothing that
 * was acknowledged. PostgreSQL only: PGlite's files belong to a single process, so there is no
 * second replica to run.
 *
 * Three real control-plane processes on one fresh database, each forwarding few calls at once (so
 * a queue builds up and every replica has claimed work when the kill lands), and one real agent
 * process answering 202 and reporting through replica 1 a second later (so the killed replica
 * holds forwarded calls the agent has yet to report on). Submissions go round-robin
 * to the three from many concurrent clients; halfway through, replica 3 is SIGKILLed while
 * submissions to it are in flight (those refused or cut off were never acknowledged). Then:
 * - every execution that got a 202, from any replica, succeeded, with the agent's result;
 * - the agent received each exactly once, and so did every execution the database holds (also
 *   one whose 202 was lost with the killed replica): nothing lost, nothing run twice;
 * - one `execution.completed` in the event log per execution.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutionAgentProcess,
  startExecutionAgentProcess,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { executionStatuses } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { type ReplicaCluster, startReplicaCluster, tally } from '../support/replica-cluster.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const NOTE = POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process';
const RUN_ID = randomBytes(3).toString('hex');
const NODE_ID = `replicas-crash-${RUN_ID}`;
const TARGET = `${NODE_ID}.work`;
const TOTAL = 900;
const CLIENTS = 30;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);

let cluster: ReplicaCluster | undefined;
let agent: ExecutionAgentProcess | undefined;

beforeAll(async () => {
  if (!POSTGRES) return;
  cluster = await startReplicaCluster('sy_replicas_crash', 3, {
    // A call the killed replica claimed and the agent never took is queued again this long after
    // the replica's lease (15 s) ran out.
    SWITCHYARD_EXECUTION_QUEUE_ORPHAN_GRACE: '2s',
    SWITCHYARD_EXECUTION_QUEUE_DISPATCH_CONCURRENCY: '4',
  });
}, 120_000);

afterAll(async () => {
  await agent?.kill();
  await cluster?.close();
});

interface Submission {
  index: number;
  replica: number;
  /** The execution id of a 202; undefined when the replica refused or the connection broke. */
  id?: string;
  failure?: string;
}

describe('SIGKILL of one of three control-plane replicas under load', () => {
  it.skipIf(!POSTGRES)(
    `loses no acknowledged execution and runs none twice (${NOTE})`,
    { timeout: 180_000 },
    async () => {
      const { replicas, replicaIds, db } = cluster!;
      agent = await startExecutionAgentProcess({
        controlPlaneUrl: replicas[0]!.url,
        nodeId: NODE_ID,
        // Reports a second after taking a call, so the killed replica always holds calls the agent
        // took and has yet to report on (finished by a report to another replica).
        reasoners: { work: { kind: 'accept', callbackDelayMs: 1000 } },
        callbackRetry: { retries: 120, backoffMs: 250, maxBackoffMs: 250 },
      });
      for (const replica of replicas) {
        await eventually(`${replica.url} routes to the agent`, async () => {
          const response = await fetch(`${replica.url}/api/v1/nodes/${NODE_ID}`);
          return response.status === 200 && (await response.json()).lifecycle_status === 'ready'
            ? true
            : undefined;
        });
      }

      const submissions: Submission[] = [];
      let next = 0;
      let killed: Promise<unknown> | undefined;
      let atKill:
        | { acknowledged: number; unfinishedOf3: number; claimedBy3: Record<string, number> }
        | undefined;
      const client = async () => {
        while (next < TOTAL) {
          const index = next++;
          const replica = index % 3;
          const submission: Submission = { index, replica };
          submissions.push(submission);
          try {
            const response = await fetch(`${replicas[replica]!.url}/api/v1/execute/async/${TARGET}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ input: { n: index } }),
            });
            const body = (await response.json()) as { execution_id?: string };
            if (response.status === 202 && body.execution_id) submission.id = body.execution_id;
            else submission.failure = `${response.status} ${JSON.stringify(body)}`;
          } catch (error) {
            submission.failure = String(error);
          }
          if (!killed && submissions.filter((s) => s.id).length >= TOTAL / 2) {
            killed = (async () => {
              // What replica 3 acknowledged and has not finished yet: the work at stake.
              const mine = submissions.filter((s) => s.replica === 2 && s.id).map((s) => s.id!);
              const statuses = await executionStatuses(replicas[0]!.url, mine);
              const unfinishedOf3 = mine.filter((id) => !TERMINAL.has(statuses.get(id)?.status)).length;
              const exit = await replicas[2]!.kill();
              expect(exit.signal).toBe('SIGKILL');
              // Nothing of replica 3 changes from here on: what it held claimed when it died.
              const held = await db('executions')
                .select('status', db.raw('accepted_at is not null as accepted'))
                .where({ dispatched_by: replicaIds[2], target: TARGET })
                .whereNotIn('status', [...TERMINAL]);
              atKill = {
                acknowledged: submissions.filter((s) => s.id).length,
                unfinishedOf3,
                claimedBy3: tally(held.map((r) => `${r.status}${r.accepted ? ' (agent took it)' : ''}`)),
              };
            })();
          }
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      await killed;
      const acknowledged = submissions.filter((s) => s.id);
      const ids = acknowledged.map((s) => s.id!);
      expect(new Set(ids).size).toBe(ids.length);
      const refusedBy3 = submissions.filter((s) => s.failure && s.replica === 2).length;
      expect(
        submissions.filter((s) => s.failure && s.replica !== 2).map((s) => s.failure),
        'submissions refused by the replicas that kept running',
      ).toEqual([]);
      expect(refusedBy3, 'submissions to replica 3 after its kill failed').toBeGreaterThan(0);
      expect(
        atKill!.unfinishedOf3,
        'precondition: replica 3 had unfinished work when it was killed',
      ).toBeGreaterThan(0);
      expect(
        Object.values(atKill!.claimedBy3).reduce((sum, n) => sum + n, 0),
        'precondition: replica 3 held executions it had forwarded when it was killed',
      ).toBeGreaterThan(0);

      let statuses = new Map<string, any>();
      await eventually(
        `all ${ids.length} acknowledged executions finished`,
        async () => {
          statuses = await executionStatuses(replicas[1]!.url, ids);
          return ids.every((id) => TERMINAL.has(statuses.get(id)?.status)) ? true : undefined;
        },
        () => `statuses: ${JSON.stringify(tally([...statuses.values()].map((r) => r.status)))}`,
        120_000,
      );

      // Every execution the database holds for the target: the acknowledged ones, and any whose
      // 202 died with replica 3.
      const rows = await db('executions')
        .select('execution_id', 'status', 'result', 'dispatched_by', 'dispatch_count')
        .where('target', TARGET);
      const completed = tally(
        (
          await db('event_log')
            .select(db.raw(`payload->>'execution_id' as execution_id`))
            .where('event', 'execution.completed')
        ).map((r) => r.execution_id as string),
      );
      const received = new Map<string, number>();
      for (const e of agent.events) {
        if (e.event === 'received' && e.execution_id)
          received.set(e.execution_id, (received.get(e.execution_id) ?? 0) + 1);
      }
      const byId = new Map(rows.map((r) => [r.execution_id as string, r]));
      const summary = {
        submitted: submissions.length,
        acknowledged: ids.length,
        acknowledged_by_replica: tally(acknowledged.map((s) => String(s.replica + 1))),
        refused_by_killed_replica: refusedBy3,
        at_kill: atKill,
        rows: rows.length,
        unacknowledged_rows: rows.length - ids.length,
        dispatched_by: tally(rows.map((r) => String(replicaIds.indexOf(r.dispatched_by) + 1))),
        dispatched_more_than_once: rows.filter((r) => r.dispatch_count > 1).length,
        final: tally(rows.map((r) => r.status)),
      };
      console.log(`replicas-crash: ${JSON.stringify(summary)}`);

      expect
        .soft(
          ids.filter((id) => !byId.has(id)),
          'acknowledged but not stored',
        )
        .toEqual([]);
      expect
        .soft(
          acknowledged
            .filter(
              (s) => JSON.stringify(byId.get(s.id!)?.result) !== JSON.stringify({ echo: { n: s.index } }),
            )
            .map((s) => ({ id: s.id, replica: s.replica + 1, row: byId.get(s.id!) })),
          'acknowledged executions without the agent’s result',
        )
        .toEqual([]);
      expect
        .soft(
          rows.filter((r) => r.status !== 'succeeded').map((r) => r.execution_id),
          'stored executions not succeeded',
        )
        .toEqual([]);
      expect
        .soft(
          rows
            .filter((r) => received.get(r.execution_id) !== 1)
            .map((r) => `${r.execution_id}×${received.get(r.execution_id) ?? 0}`),
          'agent receipts not exactly 1',
        )
        .toEqual([]);
      expect
        .soft(
          [...received.keys()].filter((id) => !byId.has(id)),
          'agent received executions the database does not hold',
        )
        .toEqual([]);
      expect
        .soft(
          rows
            .filter((r) => completed[r.execution_id] !== 1)
            .map((r) => `${r.execution_id}×${completed[r.execution_id] ?? 0}`),
          'execution.completed not exactly once',
        )
        .toEqual([]);
    },
  );
});
