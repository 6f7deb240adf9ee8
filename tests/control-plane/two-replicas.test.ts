/**
 * Two control-plane processes on one PostgreSQL share one queue: no execution is dispatched
 * twice, and SSE clients on one see the other's events. PostgreSQL only: PGlite's files
 * belong to a single process, so there is no second replica to run.
 *
 * Two real control-plane processes (A and B) on one throwaway database and one real agent
 * process, registered with A, answering 200 at once (so the replica that dispatches an execution
 * is the one that finishes it). 500 async executions are submitted alternately to A and B. Then:
 * - all succeed, and the agent received each exactly once (none dispatched twice);
 * - both replicas dispatched work (both replica ids appear in `dispatched_by`);
 * - an SSE client on A, connected before the first submission, receives execution.completed for
 *   every execution, among them those submitted to B and finished by B;
 * - resuming on B with Last-Event-ID set to a frame id seen on A delivers exactly the frames A
 *   received after that one, in the same order.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutionAgentProcess,
  startExecutionAgentProcess,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import {
  type ControlPlaneProcess,
  executionStatuses,
  startControlPlaneProcess,
  submitAsync,
} from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { openSse, type SseReader } from '../support/sse-reader.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const TOTAL = 500;
const RUN_ID = randomBytes(3).toString('hex');
const NODE_ID = `replicas-agent-${RUN_ID}`;
const TARGET = `${NODE_ID}.work`;
const POSTGRES = Boolean(process.env.DATABASE_URL);

/** Reads GET /api/ui/v1/executions/events as it arrives (Last-Event-ID when resuming). */
function openExecutionEvents(url: string, lastEventId?: string): Promise<SseReader> {
  return openSse(`${url}/api/ui/v1/executions/events`, lastEventId);
}

let dirA: string;
let dirB: string;
let database: ThrowawayDatabase | undefined;
let replicaA: ControlPlaneProcess | undefined;
let replicaB: ControlPlaneProcess | undefined;
let agent: ExecutionAgentProcess | undefined;
const streams: SseReader[] = [];

beforeAll(async () => {
  if (!POSTGRES) return;
  dirA = mkdtempSync(join(tmpdir(), 'sy-replica-a-'));
  dirB = mkdtempSync(join(tmpdir(), 'sy-replica-b-'));
  database = await throwawayDatabase('sy_two_replicas');
  // One after the other: the first one migrates the fresh database.
  replicaA = await startControlPlaneProcess({ dir: dirA, databaseUrl: database.url });
  replicaB = await startControlPlaneProcess({ dir: dirB, databaseUrl: database.url });
});

afterAll(async () => {
  for (const stream of streams) stream.close();
  await agent?.kill();
  await Promise.all([replicaA?.stop(), replicaB?.stop()]);
  await database?.drop();
  for (const dir of [dirA, dirB]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('two control-plane replicas on one PostgreSQL database', () => {
  it.skipIf(!POSTGRES)(
    `dispatch one queue without running anything twice, and share their event streams (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process'})`,
    { timeout: 110_000 },
    async () => {
      const a = replicaA!;
      const b = replicaB!;
      agent = await startExecutionAgentProcess({
        controlPlaneUrl: a.url,
        nodeId: NODE_ID,
        reasoners: { work: { kind: 'answer' } },
      });
      // Which replica id is which process: each lease row names its pid.
      const db = await openDatabase({ url: database!.url, poolMax: 2 });
      try {
        const leases = await eventually('both replicas hold a lease', async () => {
          const rows = await db('control_plane_replicas').select('replica_id', 'pid');
          const idA = rows.find((r) => r.pid === a.pid)?.replica_id as string | undefined;
          const idB = rows.find((r) => r.pid === b.pid)?.replica_id as string | undefined;
          return idA && idB ? { idA, idB } : undefined;
        });
        // B must route to the agent registered through A before anything is submitted to it.
        await eventually('replica B sees the agent', async () => {
          const response = await fetch(`${b.url}/api/v1/nodes/${NODE_ID}`);
          return response.status === 200 && (await response.json()).lifecycle_status === 'ready'
            ? true
            : undefined;
        });

        const onA = await openExecutionEvents(a.url);
        streams.push(onA);

        const submitted = await submitAsync((index) => (index % 2 === 0 ? a.url : b.url), TARGET, TOTAL, 25);
        const ids = submitted.map((s) => s.id);
        expect(new Set(ids).size).toBe(TOTAL);
        let statuses = new Map<string, any>();
        await eventually(
          `all ${TOTAL} executions finished`,
          async () => {
            statuses = await executionStatuses(b.url, ids);
            return ids.every((id) =>
              ['succeeded', 'failed', 'cancelled', 'timeout'].includes(statuses.get(id)?.status),
            )
              ? true
              : undefined;
          },
          () => `statuses: ${JSON.stringify(tally([...statuses.values()].map((r) => r.status)))}`,
        );
        const notSucceeded = ids.filter((id) => statuses.get(id)?.status !== 'succeeded');
        expect(
          notSucceeded.map((id) => statuses.get(id)),
          'not succeeded',
        ).toEqual([]);

        // None dispatched twice: the agent received each exactly once.
        const received = new Map<string, number>();
        for (const e of agent.events) {
          if (e.event === 'received' && e.execution_id)
            received.set(e.execution_id, (received.get(e.execution_id) ?? 0) + 1);
        }
        const receivedOff = ids.filter((id) => received.get(id) !== 1);
        expect(
          receivedOff.map((id) => `${id}×${received.get(id) ?? 0}`),
          'agent receipts not exactly 1',
        ).toEqual([]);

        // Both replicas dispatched work.
        const rows = await db('executions')
          .select('execution_id', 'dispatched_by', 'dispatch_count')
          .whereIn('execution_id', ids);
        const dispatchedBy = new Map(rows.map((r) => [r.execution_id as string, r.dispatched_by as string]));
        const byReplica = tally(rows.map((r) => r.dispatched_by ?? 'none'));
        console.log(
          `two-replicas: dispatched by A ${byReplica[leases.idA] ?? 0}, by B ${byReplica[leases.idB] ?? 0} (${JSON.stringify(byReplica)})`,
        );
        expect(byReplica[leases.idA] ?? 0, 'executions dispatched by A').toBeGreaterThan(0);
        expect(byReplica[leases.idB] ?? 0, 'executions dispatched by B').toBeGreaterThan(0);
        expect(
          rows.filter((r) => r.dispatch_count !== 1).map((r) => r.execution_id),
          'dispatch_count 1 each',
        ).toEqual([]);

        // The SSE client on A sees every completion, those B submitted and finished among them.
        const completedOnA = () => onA.frames.filter((f) => f.event === 'execution.completed');
        await eventually(
          `execution.completed on A for all ${TOTAL}`,
          async () => {
            const seen = new Set(completedOnA().map((f) => f.data?.execution_id));
            return ids.every((id) => seen.has(id)) ? true : undefined;
          },
          () => `completed frames on A: ${completedOnA().length}`,
        );
        const viaB = submitted
          .filter((s) => s.url === b.url && dispatchedBy.get(s.id) === leases.idB)
          .map((s) => s.id);
        expect(viaB.length, 'executions submitted to and finished by B').toBeGreaterThan(0);
        const completionsOnA = tally(completedOnA().map((f) => f.data.execution_id));
        expect(
          viaB.filter((id) => completionsOnA[id] !== 1),
          'B-finished executions not seen once on A',
        ).toEqual([]);
        expect(
          ids.filter((id) => completionsOnA[id] !== 1),
          'completions not seen exactly once on A',
        ).toEqual([]);
        for (const frame of completedOnA()) {
          expect(frame.id, 'every frame has an id').toBeTruthy();
          expect(frame.data).toMatchObject({ execution_id: expect.any(String), status: 'succeeded' });
        }

        // Resuming on B after a frame id seen on A delivers the frames A had after it, in order.
        const seenOnA = onA.frames.filter((f) => f.event?.startsWith('execution.'));
        const cut = Math.floor(seenOnA.length / 2);
        const resumeAfter = seenOnA[cut]!;
        const expected = seenOnA.slice(cut + 1).map((f) => `${f.id} ${f.event} ${f.data?.execution_id}`);
        const onB = await openExecutionEvents(b.url, resumeAfter.id);
        streams.push(onB);
        const resumed = () =>
          onB.frames
            .filter((f) => f.event?.startsWith('execution.'))
            .map((f) => `${f.id} ${f.event} ${f.data?.execution_id}`);
        await eventually(
          `B resumes after ${resumeAfter.id} with the ${expected.length} frames A had after it`,
          async () => (resumed().length >= expected.length ? true : undefined),
          () => `received on B: ${resumed().length}`,
        );
        expect(resumed().slice(0, expected.length)).toEqual(expected);
        expect(resumed().length, 'nothing beyond what A had (no event happened since)').toBe(expected.length);
        console.log(
          `two-replicas: A's stream had ${seenOnA.length} frames (${completedOnA().length} execution.completed, ${viaB.length} of executions submitted to and finished by B); resumed on B after frame #${cut + 1} (${resumeAfter.id}), which delivered the remaining ${expected.length}`,
        );
      } finally {
        await db.destroy();
      }
    },
  );
});

function tally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
