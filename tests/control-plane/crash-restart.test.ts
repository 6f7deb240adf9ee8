/**
 * A queued execution survives a crash of the control plane: SIGKILL the process while 1,000 async
 * executions are queued, restart it, and every one finishes exactly once. On both databases: with
 * DATABASE_URL a throwaway PostgreSQL database, without it the embedded PGlite files the server process
 * owns.
 *
 * A real control-plane process (its build, as `npm start` runs it) and a real agent process
 * (test/helpers/execution-agent-process.mjs) answering 202 and reporting through the status
 * callback a moment later, retrying its callbacks long enough to outlive the restart. 1,000 async
 * executions are submitted, the server is SIGKILLed while most of them are still unfinished (a
 * stated precondition, checked through the API just before the kill), restarted on the same port
 * and database, and the test waits until all 1,000 are terminal. Then, from the database and the
 * agent's own log:
 * - every execution succeeded, with the agent's result;
 * - exactly one terminal transition each: one `execution.completed` row per execution in event_log;
 * - the agent received each execution exactly once, even those whose 202 died with the server.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcessEvent,
  type ExecutionAgentProcess,
  parseAgentLog,
  startExecutionAgentProcess,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import {
  type ControlPlaneProcess,
  executionStatuses,
  startControlPlaneProcess,
  submitAsync,
} from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const TOTAL = 1000;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);
const RUN_ID = randomBytes(3).toString('hex');
const NODE_ID = `crash-agent-${RUN_ID}`;
const TARGET = `${NODE_ID}.work`;
const SETTINGS = {
  // An execution claimed by the killed server and not yet accepted waits this long for the
  // agent's own report before it is queued again. Exactly once holds when the agent reports
  // within it (the documented condition); 2 s was shorter than the restarted server on PGlite,
  // dispatching 64 calls at once on a loaded 2-core CI machine, took to take in the retried
  // callbacks, so four executions the agent had already taken were sent again. With 10 s it still
  // happened under load while the embedded database's statements kept the restarted server from
  // accepting connections (the reports waited 11 to 16 s unread); they now take turns with it
  // (packages/shared/src/db/open-database.ts) and the reports were answered within 1.3 s.
  SWITCHYARD_EXECUTION_QUEUE_ORPHAN_GRACE: '10s',
};
/**
 * The first server forwards few calls at once, so most of the 1,000 are still queued when it is
 * killed; the restarted one runs with the default (64), so recovery also races many concurrent
 * dispatches against the callbacks of the agent and the reaper.
 */
const FIRST_LIFE = { ...SETTINGS, SWITCHYARD_EXECUTION_QUEUE_DISPATCH_CONCURRENCY: '4' };

let dir: string;
let database: ThrowawayDatabase | undefined;
let server: ControlPlaneProcess | undefined;
let agent: ExecutionAgentProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-crash-restart-'));
  database = await throwawayDatabase('sy_crash_restart');
});

afterAll(async () => {
  await server?.kill();
  await agent?.kill();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Rows read back once the server is stopped (PGlite's files belong to one process at a time). */
async function readDatabase(ids: string[]) {
  const db = await openDatabase(
    database?.url ? { url: database.url, poolMax: 2 } : { dataDir: join(dir, 'control-plane') },
  );
  try {
    const rows = await db('executions')
      .select(
        'execution_id',
        'status',
        'result',
        'error',
        'dispatch_count',
        'dispatched_by',
        'accepted_at',
        'completed_at',
        'updated_at',
      )
      .whereIn('execution_id', ids);
    const events = await db('event_log')
      .select('id', 'event', db.raw(`payload->>'execution_id' as execution_id`), 'payload')
      .whereIn('event', ['execution.started', 'execution.completed'])
      .orderBy('id');
    return { rows, events };
  } finally {
    await db.destroy();
  }
}

describe(`SIGKILL of the control plane with ${TOTAL} async executions queued (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('finishes every one exactly once after a restart', { timeout: 115_000 }, async () => {
    const port = await freePort();
    const logFile = join(dir, 'agent.log');
    const start = (env: Record<string, string>) =>
      startControlPlaneProcess({ dir, databaseUrl: database?.url, port, env });
    server = await start(FIRST_LIFE);
    agent = await startExecutionAgentProcess({
      controlPlaneUrl: server.url,
      nodeId: NODE_ID,
      reasoners: { work: { kind: 'accept', callbackDelayMs: 100 } },
      // Callbacks keep being retried for 30 s: long enough to reach the restarted server.
      callbackRetry: { retries: 120, backoffMs: 250, maxBackoffMs: 250 },
      logFile,
    });

    const t0 = Date.now();
    const submitted = await submitAsync(server.url, TARGET, TOTAL);
    const submitMs = Date.now() - t0;
    const ids = submitted.map((s) => s.id);
    expect(new Set(ids).size).toBe(TOTAL);

    // Precondition: the kill must land while most of the work is still to be done, or the
    // restart would recover nothing. Read through the API just before the kill.
    const before = await executionStatuses(server.url, ids);
    const beforeCounts = tally([...before.values()].map((r) => r.status));
    const unfinished = ids.filter((id) => !TERMINAL.has(before.get(id)?.status)).length;
    const killed = await server.kill();
    const killedAt = Date.now();
    expect(killed.signal).toBe('SIGKILL');
    const firstOutput = server.output();
    // What the agent received from the killed server (it logs each receipt synchronously).
    const receivedFromFirst = receipts(readAgentLog(logFile));
    expect(
      unfinished,
      `precondition: most executions unfinished at the kill (${JSON.stringify(beforeCounts)})`,
    ).toBeGreaterThanOrEqual(TOTAL / 2);

    const t1 = Date.now();
    server = await start(SETTINGS);
    const restartMs = Date.now() - t1;
    const readyAt = Date.now();
    let statuses = new Map<string, any>();
    await eventually(
      `all ${TOTAL} executions terminal after the restart`,
      async () => {
        statuses = await executionStatuses(server!.url, ids);
        return ids.every((id) => TERMINAL.has(statuses.get(id)?.status)) ? true : undefined;
      },
      () =>
        `statuses: ${JSON.stringify(tally([...statuses.values()].map((r) => r.status)))}, unknown to the server: ${TOTAL - statuses.size}\n` +
        `server output:\n${server!.output()}`,
      90_000,
    );
    const recoveryMs = Date.now() - t1;
    const secondOutput = server.output();
    // Stop cleanly, so the embedded database can be opened here, and stop the agent, so its
    // log is complete.
    expect((await server.stop()).code).toBe(0);
    server = undefined;
    await agent.stop();
    agent = undefined;

    const agentEvents = readAgentLog(logFile);
    const received = receipts(agentEvents);
    const { rows, events } = await readDatabase(ids);
    const byId = new Map(rows.map((row) => [row.execution_id as string, row]));
    const completed = countBy(
      events.filter((e) => e.event === 'execution.completed').map((e) => e.execution_id),
    );
    const started = countBy(events.filter((e) => e.event === 'execution.started').map((e) => e.execution_id));

    // What happened, for the report whichever way the assertions go.
    const redispatched = ids.filter((id) => (byId.get(id)?.dispatch_count ?? 0) > 1);
    // The agent took these from the killed server, but their 202 was never recorded and they
    // finished after the kill: the case the orphan grace exists for (the agent's callback has to
    // settle them, not a second dispatch).
    const unrecorded = [...receivedFromFirst.keys()].filter((id) => {
      const row = byId.get(id);
      return row && row.accepted_at == null && new Date(row.completed_at).getTime() > killedAt;
    });
    const summary = {
      database: database?.url ? 'postgresql' : 'pglite',
      at_kill: { ...beforeCounts, unfinished, agent_received: receivedFromFirst.size },
      final: tally(rows.map((r) => r.status)),
      dispatched_more_than_once: redispatched.map((id) => ({
        id,
        dispatch_count: byId.get(id)?.dispatch_count,
        started_events: started.get(id) ?? 0,
        received_from_killed_server: receivedFromFirst.get(id) ?? 0,
      })),
      taken_by_agent_but_202_unrecorded: unrecorded,
      agent_receipts: received.size,
      ms: { submit: submitMs, restart: restartMs, restart_to_all_terminal: recoveryMs },
    };
    console.log(`crash-restart: ${JSON.stringify(summary)}`);

    /** Everything known about one execution, for failure messages. */
    const evidence = (id: string) =>
      JSON.stringify({
        row: byId.get(id),
        events: events.filter((e) => e.execution_id === id).map((e) => ({ id: e.id, event: e.event })),
        // Times in ms after the kill: when the agent logged each event; when the restarted server
        // answered its health check.
        agent: agentEvents
          .filter((e) => 'execution_id' in e && e.execution_id === id)
          .map(({ at, ...e }) => ({ ...e, after_kill_ms: at - killedAt })),
        restarted_server_ready_after_kill_ms: readyAt - killedAt,
        status_before_kill: before.get(id)?.status,
      });

    // Soft: a failure in one property must not hide the others (each names its evidence).
    const notSucceeded = ids.filter((id) => byId.get(id)?.status !== 'succeeded');
    expect
      .soft(notSucceeded, `not succeeded: ${notSucceeded.slice(0, 5).map(evidence).join('\n')}`)
      .toEqual([]);
    const wrongResult = submitted.filter(
      ({ id, index }) => JSON.stringify(byId.get(id)?.result) !== JSON.stringify({ echo: { n: index } }),
    );
    expect
      .soft(
        wrongResult.map((s) => s.id),
        'results',
      )
      .toEqual([]);

    // One terminal transition each: exactly one execution.completed row per execution.
    const completionsOff = ids.filter((id) => completed.get(id) !== 1);
    expect
      .soft(
        completionsOff,
        `execution.completed rows not exactly 1: ${completionsOff.slice(0, 5).map(evidence).join('\n')}`,
      )
      .toEqual([]);
    const strangers = [...completed.keys()].filter((id) => !byId.has(id));
    expect.soft(strangers, 'execution.completed for executions never submitted').toEqual([]);
    expect
      .soft(
        ids.filter((id) => !started.has(id)),
        'executions without execution.started',
      )
      .toEqual([]);

    // The agent received each exactly once: nothing lost, nothing run twice.
    const receivedOff = ids.filter((id) => received.get(id) !== 1);
    expect
      .soft(
        receivedOff,
        `agent receipts not exactly 1 (${receivedOff.map((id) => `${id}×${received.get(id) ?? 0}`).join(', ')}):\n` +
          receivedOff.slice(0, 10).map(evidence).join('\n') +
          `\nfirst server's output:\n${firstOutput.slice(-5000)}\nsecond server's output:\n${secondOutput.slice(-5000)}`,
      )
      .toEqual([]);
    expect
      .soft(
        [...received.keys()].filter((id) => !byId.has(id)),
        'agent received unknown ids',
      )
      .toEqual([]);
  });
});

function readAgentLog(file: string): AgentProcessEvent[] {
  return parseAgentLog(existsSync(file) ? readFileSync(file, 'utf8') : '');
}

/** execution id -> how many times the agent received it. */
function receipts(events: AgentProcessEvent[]): Map<string, number> {
  return countBy(events.flatMap((e) => (e.event === 'received' && e.execution_id ? [e.execution_id] : [])));
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** How many of each status, as an object for messages. */
function tally(statuses: string[]): Record<string, number> {
  return Object.fromEntries(countBy(statuses));
}
