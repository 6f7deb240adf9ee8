/**
 * Many replicas on one PostgreSQL: three control-plane processes on one database
 * behave as one. PostgreSQL only: PGlite's files belong to a single process, so there is no
 * second replica to run.
 *
 * Three real control-plane processes (their build, started at the same time on a fresh database,
 * so all three migrate it at once) and real agent processes. In order:
 * - async executions submitted round-robin to the three are dispatched by each of them (the
 *   `dispatched_by` replica id of every execution record, and each replica's
 *   `service_executions_total` at /metrics, which sum to the total) and the agent receives each
 *   exactly once;
 * - SSE clients on replica 1 see the execution events of executions dispatched by replicas 2 and
 *   3, the node events of an agent that registered through replica 2, and the memory changes
 *   written through replicas 2 and 3; reconnected to replica 2 with `Last-Event-ID`, the execution
 *   and memory streams deliver exactly the events a client that never disconnected (on replica 3)
 *   received after that id: no gap, no repeat;
 * - a traffic weight set to 0 through replica 1's connector API sends no new execution to that
 *   version from replica 1 once the PUT answered, nor from replicas 2 and 3 once their routing
 *   cache's 2 s have passed (normally the change's notification clears it at once: counted);
 * - a stored configuration reloaded on replica 3 (a new API key) is in force on all three.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutionAgentProcess,
  startExecutionAgentProcess,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { executionStatuses, submitAsync } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { type ReplicaCluster, startReplicaCluster, tally } from '../support/replica-cluster.ts';
import { openSse, type SseFrame, type SseReader } from '../support/sse-reader.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const NOTE = POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process';
const RUN_ID = randomBytes(3).toString('hex');
const NODE_ID = `replicas-work-${RUN_ID}`;
const WEIGHTED_ID = `replicas-weighted-${RUN_ID}`;
const SESSION = `sess_${RUN_ID}`;
const TOKEN = `connector-${RUN_ID}`;
const TOTAL = 300;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);

let cluster: ReplicaCluster | undefined;
const agents: ExecutionAgentProcess[] = [];
const streams: SseReader[] = [];
/** Streams on replica 1, open from the start. */
let executionsOn1: SseReader;
let nodesOn1: SseReader;
let memoryOn1: SseReader;
/** Streams on replica 3 that stay connected throughout: what a client that never left received. */
let executionsReference: SseReader;
let memoryReference: SseReader;

const url = (n: number) => cluster!.replicas[n]!.url;

async function open(stream: Promise<SseReader>): Promise<SseReader> {
  const reader = await stream;
  streams.push(reader);
  return reader;
}

beforeAll(async () => {
  if (!POSTGRES) return;
  cluster = await startReplicaCluster('sy_replicas_work', 3, {
    SERVICE_CONNECTOR_TOKEN: TOKEN,
    SERVICE_CONFIG_SOURCE: 'db',
  });
  executionsOn1 = await open(openSse(`${url(0)}/api/ui/v1/executions/events`));
  nodesOn1 = await open(openSse(`${url(0)}/api/ui/v1/nodes/events`));
  memoryOn1 = await open(openSse(`${url(0)}/api/v1/memory/events/sse?scope_id=${SESSION}`));
  executionsReference = await open(openSse(`${url(2)}/api/ui/v1/executions/events`));
  memoryReference = await open(openSse(`${url(2)}/api/v1/memory/events/sse?scope_id=${SESSION}`));
}, 120_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  await Promise.all(agents.map((agent) => agent.kill()));
  await cluster?.close();
});

async function startAgent(controlPlaneUrl: string, nodeId: string, version: string) {
  const agent = await startExecutionAgentProcess({
    controlPlaneUrl,
    nodeId,
    version,
    reasoners: { work: { kind: 'answer' } },
  });
  agents.push(agent);
  return agent;
}

/** Waits until every listed replica routes to `nodeId` (its instances are ready in the database). */
async function readyEverywhere(nodeId: string, versions: number) {
  for (const n of [0, 1, 2]) {
    await eventually(`replica ${n + 1} sees ${versions} ready version(s) of ${nodeId}`, async () => {
      const response = await fetch(`${url(n)}/api/v1/nodes/${nodeId}`);
      if (response.status !== 200) return undefined;
      const body = (await response.json()) as { instances?: Array<{ lifecycle_status: string }> };
      const ready = (body.instances ?? []).filter((instance) => instance.lifecycle_status === 'ready');
      return ready.length === versions ? true : undefined;
    });
  }
}

async function waitTerminal(ids: string[]): Promise<Map<string, any>> {
  let statuses = new Map<string, any>();
  await eventually(
    `all ${ids.length} executions finished`,
    async () => {
      statuses = await executionStatuses(url(1), ids);
      return ids.every((id) => TERMINAL.has(statuses.get(id)?.status)) ? true : undefined;
    },
    () => `statuses: ${JSON.stringify(tally([...statuses.values()].map((r) => r.status)))}`,
  );
  return statuses;
}

function receipts(agent: ExecutionAgentProcess): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of agent.events) {
    if (e.event === 'received' && e.execution_id)
      counts.set(e.execution_id, (counts.get(e.execution_id) ?? 0) + 1);
  }
  return counts;
}

async function setMemory(n: number, key: string, data: unknown) {
  const response = await fetch(`${url(n)}/api/v1/memory/set`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, data, scope: 'session', scope_id: SESSION }),
  });
  expect(response.status, `memory set through replica ${n + 1}`).toBe(200);
}

/**
 * The replica's `service_executions_total` sample for the node's succeeded executions (0 when it
 * has none). Read from the Prometheus text by hand: one sample of one metric, whatever the order
 * of its labels.
 */
async function succeededCount(base: string, nodeId: string): Promise<number> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  for (const line of (await response.text()).split('\n')) {
    const sample = /^service_executions_total\{([^}]*)\} (\S+)$/.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...sample[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.node === nodeId && labels.status === 'succeeded') return Number(sample[2]);
  }
  return 0;
}

const describeFrame = (f: SseFrame) =>
  `${f.id} ${f.event} ${f.data?.execution_id ?? ''}${f.data?.key ?? ''}`.trim();

describe('three control-plane replicas on one PostgreSQL database', () => {
  let submitted: Array<{ id: string; index: number; url: string }> = [];

  it.skipIf(!POSTGRES)(
    `dispatch async executions submitted to all three, each exactly once (${NOTE})`,
    { timeout: 120_000 },
    async () => {
      const agent = await startAgent(url(1), NODE_ID, '1.0.0');
      await readyEverywhere(NODE_ID, 1);
      submitted = await submitAsync((index) => url(index % 3), `${NODE_ID}.work`, TOTAL, 30);
      const ids = submitted.map((s) => s.id);
      expect(new Set(ids).size).toBe(TOTAL);
      const statuses = await waitTerminal(ids);
      expect(
        ids.filter((id) => statuses.get(id)?.status !== 'succeeded').map((id) => statuses.get(id)),
        'not succeeded',
      ).toEqual([]);

      const received = receipts(agent);
      expect(
        ids.filter((id) => received.get(id) !== 1).map((id) => `${id}×${received.get(id) ?? 0}`),
        'agent receipts not exactly 1',
      ).toEqual([]);

      const rows = await cluster!
        .db('executions')
        .select('execution_id', 'dispatched_by', 'dispatch_count')
        .whereIn('execution_id', ids);
      const byReplica = tally(rows.map((r) => r.dispatched_by));
      console.log(
        `replicas-work: dispatched by replica 1/2/3: ${cluster!.replicaIds.map((id) => byReplica[id] ?? 0).join('/')} of ${TOTAL}`,
      );
      for (const [n, id] of cluster!.replicaIds.entries()) {
        expect(byReplica[id] ?? 0, `executions dispatched by replica ${n + 1}`).toBeGreaterThan(0);
      }
      expect(
        rows.filter((r) => r.dispatch_count !== 1).map((r) => r.execution_id),
        'dispatch_count 1 each',
      ).toEqual([]);

      // The same from /metrics, as an operator sees it: each replica counts the executions it
      // finished (here the dispatching one: the agent answers 200), and the sum is the total.
      const finishedBy = await Promise.all([0, 1, 2].map((n) => succeededCount(url(n), NODE_ID)));
      expect(
        finishedBy.reduce((sum, n) => sum + n, 0),
        `service_executions_total by replica ${finishedBy}`,
      ).toBe(TOTAL);
      expect(finishedBy, 'service_executions_total per replica').toEqual(
        cluster!.replicaIds.map((id) => byReplica[id] ?? 0),
      );
    },
  );

  it.skipIf(!POSTGRES)(
    `an SSE client on replica 1 sees execution, node and memory events caused on replicas 2 and 3, and resumes on replica 2 with Last-Event-ID (${NOTE})`,
    { timeout: 120_000 },
    async () => {
      expect(submitted.length, 'the first test submitted the executions').toBe(TOTAL);
      // Executions: every completion, those dispatched by replicas 2 and 3 among them, once each.
      const ids = submitted.map((s) => s.id);
      const completedOn1 = () => executionsOn1.frames.filter((f) => f.event === 'execution.completed');
      await eventually(
        `execution.completed on replica 1 for all ${TOTAL}`,
        async () => {
          const seen = new Set(completedOn1().map((f) => f.data?.execution_id));
          return ids.every((id) => seen.has(id)) ? true : undefined;
        },
        () => `completed frames on replica 1: ${completedOn1().length}`,
      );
      const completions = tally(completedOn1().map((f) => f.data.execution_id));
      expect(
        ids.filter((id) => completions[id] !== 1),
        'completions not seen exactly once on replica 1',
      ).toEqual([]);
      const rows = await cluster!
        .db('executions')
        .select('execution_id', 'dispatched_by')
        .whereIn('execution_id', ids);
      for (const n of [1, 2]) {
        const theirs = rows
          .filter((r) => r.dispatched_by === cluster!.replicaIds[n])
          .map((r) => r.execution_id);
        expect(theirs.length, `executions dispatched by replica ${n + 1}`).toBeGreaterThan(0);
        expect(
          theirs.filter((id) => completions[id] !== 1),
          `executions dispatched by replica ${n + 1}, seen once on replica 1`,
        ).toEqual([]);
      }

      // Nodes: the agent registered and reported ready through replica 2.
      await eventually(
        'node events of the agent registered through replica 2, on replica 1',
        async () =>
          nodesOn1.frames.some((f) => f.event === 'node.status_changed' && f.data?.new_status === 'ready')
            ? true
            : undefined,
        () => JSON.stringify(nodesOn1.frames),
      );
      const nodeEvents = nodesOn1.frames
        .filter((f) => f.data?.node_id === NODE_ID)
        .map((f) => `${f.event} ${f.data.new_status ?? ''}`.trim());
      // Registered as `starting`, then its lifecycle report made it ready.
      expect(nodeEvents).toEqual(['node.registered', 'node.status_changed ready']);

      // Memory: writes through replicas 2 and 3.
      await setMemory(1, 'from-2', { replica: 2 });
      await setMemory(2, 'from-3', { replica: 3 });
      await eventually('memory changes from replicas 2 and 3 on replica 1', async () =>
        memoryOn1.frames.filter((f) => f.event === 'memory_change').length >= 2 ? true : undefined,
      );
      expect(memoryOn1.frames.filter((f) => f.event === 'memory_change').map((f) => f.data.key)).toEqual([
        'from-2',
        'from-3',
      ]);

      // Disconnect from replica 1; while away, executions and memory changes happen on 2 and 3.
      executionsOn1.close();
      memoryOn1.close();
      await Promise.all([executionsOn1.ended, memoryOn1.ended]);
      const lastExecution = executionsOn1.frames.at(-1)!;
      const lastMemory = memoryOn1.frames.filter((f) => f.event === 'memory_change').at(-1)!;
      const more = await submitAsync((index) => url(1 + (index % 2)), `${NODE_ID}.work`, 30, 15);
      for (let n = 0; n < 6; n++) await setMemory(1 + (n % 2), `away-${n}`, n);
      await waitTerminal(more.map((s) => s.id));
      // The reference client on replica 3 never disconnected: its frames after the ids above are
      // exactly what the resumed streams must deliver.
      const referenceAfter = (reader: SseReader, id: string, event: (f: SseFrame) => boolean) => {
        const frames = reader.frames.filter(event);
        const cut = frames.findIndex((f) => f.id === id);
        if (cut < 0) throw new Error(`the reference stream has no frame ${id}`);
        return frames.slice(cut + 1).map(describeFrame);
      };
      const isExecution = (f: SseFrame) => Boolean(f.event?.startsWith('execution.'));
      const isMemory = (f: SseFrame) => f.event === 'memory_change';
      await eventually('the reference streams received what happened meanwhile', async () => {
        const done = new Set(
          executionsReference.frames
            .filter((f) => f.event === 'execution.completed')
            .map((f) => f.data.execution_id),
        );
        return more.every((s) => done.has(s.id)) && memoryReference.frames.filter(isMemory).length >= 8
          ? true
          : undefined;
      });
      const expectedExecutions = referenceAfter(executionsReference, lastExecution.id!, isExecution);
      const expectedMemory = referenceAfter(memoryReference, lastMemory.id!, isMemory);
      expect(expectedExecutions.length, 'executions happened while away').toBeGreaterThanOrEqual(60);
      expect(expectedMemory).toHaveLength(6);

      const executionsOn2 = await open(openSse(`${url(1)}/api/ui/v1/executions/events`, lastExecution.id));
      const memoryOn2 = await open(
        openSse(`${url(1)}/api/v1/memory/events/sse?scope_id=${SESSION}`, lastMemory.id),
      );
      const resumed = (reader: SseReader, event: (f: SseFrame) => boolean) =>
        reader.frames.filter(event).map(describeFrame);
      await eventually(
        'replica 2 delivers what replica 1’s client missed',
        async () =>
          resumed(executionsOn2, isExecution).length >= expectedExecutions.length &&
          resumed(memoryOn2, isMemory).length >= expectedMemory.length
            ? true
            : undefined,
        () =>
          `executions ${resumed(executionsOn2, isExecution).length}/${expectedExecutions.length}, memory ${resumed(memoryOn2, isMemory).length}/${expectedMemory.length}`,
      );
      expect(resumed(executionsOn2, isExecution)).toEqual(expectedExecutions);
      expect(resumed(memoryOn2, isMemory)).toEqual(expectedMemory);
      console.log(
        `replicas-work: resumed on replica 2 after ${lastExecution.id} with ${expectedExecutions.length} execution frames and after ${lastMemory.id} with ${expectedMemory.length} memory changes`,
      );
    },
  );

  it.skipIf(!POSTGRES)(
    `a traffic weight set through replica 1 routes its new executions at once, and those of replicas 2 and 3 within their 2 s cache (${NOTE})`,
    { timeout: 120_000 },
    async () => {
      const v1 = await startAgent(url(1), WEIGHTED_ID, '1.0.0');
      const v2 = await startAgent(url(2), WEIGHTED_ID, '2.0.0');
      await readyEverywhere(WEIGHTED_ID, 2);
      // Registered through replicas 2 and 3: both reach the node stream on replica 1.
      await eventually('both versions registered and ready, on replica 1’s node stream', async () => {
        const seen = nodesOn1.frames
          .filter((f) => f.data?.node_id === WEIGHTED_ID)
          .map((f) => `${f.data.version} ${f.event} ${f.data.new_status ?? ''}`.trim());
        return ['1.0.0', '2.0.0'].every(
          (version) =>
            seen.includes(`${version} node.registered`) &&
            seen.includes(`${version} node.status_changed ready`),
        )
          ? true
          : undefined;
      });
      const target = `${WEIGHTED_ID}.work`;
      // Equal weights: both versions take work, so each replica has routed to both.
      const before = await submitAsync((index) => url(index % 3), target, 60, 30);
      await waitTerminal(before.map((s) => s.id));
      // 60 at 50 % each: a version left without any would be a chance of 2^-59.
      expect(receipts(v1).size, 'version 1.0.0 took work at equal weights').toBeGreaterThan(0);
      expect(receipts(v2).size, 'version 2.0.0 took work at equal weights').toBeGreaterThan(0);

      const response = await fetch(`${url(0)}/connector/reasoners/${WEIGHTED_ID}/versions/1.0.0/weight`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ weight: 0 }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.json()).toMatchObject({ version: '1.0.0', traffic_weight: 0, traffic_share: 0 });

      const answeredAt = Date.now();
      // An async execution is routed (its version pinned) by the replica it is submitted to.
      // Replica 1 routes by the new weight at once: it answered only once its own caches were
      // cleared. The others clear theirs when the change's notification reaches them, and keep a
      // node's instances 2 s at most in any case: submissions to them right away are counted
      // (normally none reaches 1.0.0), and those made once 2 s have passed must not reach it.
      const atOnce = await submitAsync((index) => url(index % 3), target, 60, 30);
      await new Promise((done) => setTimeout(done, Math.max(0, answeredAt + 2_000 - Date.now())));
      const later = await submitAsync((index) => url(1 + (index % 2)), target, 40, 20);
      const after = [...atOnce, ...later];
      const statuses = await waitTerminal(after.map((s) => s.id));
      expect(after.filter((s) => statuses.get(s.id)?.status !== 'succeeded')).toEqual([]);
      const toV1 = (submissions: typeof after) =>
        submissions.filter((s) => receipts(v1).has(s.id)).map((s) => `${s.id} submitted to ${s.url}`);
      console.log(
        `replicas-work: right after the weight change, ${toV1(atOnce.filter((s) => s.url !== url(0))).length} of ${atOnce.filter((s) => s.url !== url(0)).length} submissions to replicas 2 and 3 still went to 1.0.0`,
      );
      expect(
        toV1(atOnce.filter((s) => s.url === url(0))),
        'sent to the version of weight 0 by replica 1 after its PUT answered',
      ).toEqual([]);
      expect(toV1(later), 'sent to the version of weight 0 by replicas 2 and 3 after 2 s').toEqual([]);
      // Each ran exactly once, on one version or the other: a submission to replica 2 or 3 right
      // after the PUT may still be pinned to 1.0.0 and sent there (counted above, not an error).
      const runs = (s: (typeof after)[number]) =>
        (receipts(v1).get(s.id) ?? 0) + (receipts(v2).get(s.id) ?? 0);
      expect(
        after.filter((s) => runs(s) !== 1).map((s) => `${s.id} submitted to ${s.url}: ${runs(s)} runs`),
        'received exactly once by one of the two versions',
      ).toEqual([]);
    },
  );

  it.skipIf(!POSTGRES)(
    `a stored configuration reloaded on replica 3 is in force on all three (${NOTE})`,
    { timeout: 60_000 },
    async () => {
      const key = `key-${RUN_ID}`;
      const stored = await fetch(`${url(1)}/api/v1/configs/control-plane`, {
        method: 'PUT',
        headers: { 'content-type': 'text/yaml' },
        body: `api:\n  auth:\n    api_key: ${key}\n`,
      });
      expect(stored.status, await stored.clone().text()).toBe(201);
      // Stored, not applied: every replica still answers without a key.
      for (const n of [0, 1, 2]) expect((await fetch(`${url(n)}/api/v1/configs`)).status).toBe(200);

      const reload = await fetch(`${url(2)}/api/v1/configs/reload`, { method: 'POST' });
      expect(reload.status).toBe(200);
      expect(await reload.json()).toMatchObject({ applied: ['api.auth.api_key'], replicas_notified: true });
      for (const n of [0, 1, 2]) {
        await eventually(
          `replica ${n + 1} requires the reloaded key`,
          async () => ((await fetch(`${url(n)}/api/v1/configs`)).status === 401 ? true : undefined),
          () => cluster!.replicas[n]!.output(),
        );
        const withKey = await fetch(`${url(n)}/api/v1/configs`, { headers: { 'x-api-key': key } });
        expect(withKey.status, `replica ${n + 1} with the key`).toBe(200);
      }
    },
  );
});
