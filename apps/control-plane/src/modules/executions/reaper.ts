import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import { MAX_DISPATCHES } from './dispatcher.ts';
import type { Finisher } from './finisher.ts';
import { claimOrphans, findAbandoned, findSilent, requeue } from './repository.ts';

export interface ReaperDeps {
  db: Knex;
  clock: Clock;
  log: Logger;
  finisher: Finisher;
  /** This replica; its own claims are orphans only when no call here works on them. */
  replicaId: string;
  /** Executions this process is calling an agent for right now (both lanes). */
  inFlight: () => string[];
  /** How long an orphaned dispatch waits for the agent's own report before it is recovered. */
  orphanGraceMs: number;
  /** How long an execution an agent took may go without a report before it is `timeout`; 0 = for ever. */
  maxSilenceMs: number;
  /** Wakes the dispatchers after executions were queued again. */
  wakeDispatchers: () => void;
  intervalMs?: number;
}

const BATCH = 200;

/**
 * Makes sure no execution stays `running` for ever. Every replica runs it; row locks keep two
 * from recovering the same execution, and every change it makes is conditional on the state it
 * read, so racing a callback is harmless.
 *
 * - A replica that stopped (lease expired) while forwarding an async execution the agent had not
 *   yet taken: after the orphan grace (in case the agent did get it and reports), the execution
 *   is queued again with the same id, up to MAX_DISPATCHES times. A synchronous one fails: its
 *   caller's connection went with the replica.
 * - A running execution whose instance is gone (offline, evicted, unregistered) or restarted
 *   (registered again since it took the execution): failed, naming the agent, since nobody will
 *   ever report on it.
 * - An execution an agent took (202) and has not reported on for `max_silence` (24 h): timeout.
 *   Its agent is alive, but the report was lost (SDKs stop retrying callbacks after a few tries).
 *
 * A `waiting` execution is none of these: it waits for a person (its approval request's expiry
 * ends it, see the approvals feature), so every rule here reads `running` rows only; silence
 * counts again from the decision that resumes it.
 */
export function createReaper(deps: ReaperDeps) {
  const intervalMs = deps.intervalMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function recoverOrphans(): Promise<number> {
    const now = new Date(deps.clock.now());
    const failed: Array<{ id: string; error: string }> = [];
    const requeued = await deps.db.transaction(async (trx: Knex.Transaction) => {
      const orphans = await claimOrphans(
        trx,
        { id: deps.replicaId, inFlight: deps.inFlight() },
        now,
        deps.orphanGraceMs,
        BATCH,
      );
      const again: string[] = [];
      for (const row of orphans) {
        if (row.lane === 'sync') {
          failed.push({
            id: row.execution_id,
            error:
              'the control-plane replica handling this synchronous call stopped before the agent answered',
          });
        } else if (row.dispatch_count >= MAX_DISPATCHES) {
          failed.push({
            id: row.execution_id,
            error: `dispatched ${row.dispatch_count} times, and each time the replica forwarding it stopped before the agent answered`,
          });
        } else {
          again.push(row.execution_id);
        }
      }
      await requeue(trx, again, now, now);
      return again.length;
    });
    for (const { id, error } of failed) await deps.finisher.finish(id, { status: 'failed', error });
    if (requeued > 0) {
      deps.log.warn({ count: requeued }, 'executions abandoned by a stopped replica were queued again');
      deps.wakeDispatchers();
    }
    return requeued + failed.length;
  }

  async function failAbandoned(): Promise<number> {
    const rows = await findAbandoned(deps.db, BATCH);
    let count = 0;
    for (const row of rows) {
      const where = `${row.node_id}@${row.routed_version}`;
      const error =
        row.node_state === 'offline'
          ? `the agent ${where} went offline (no heartbeat within its lease) while running this execution; it will not report a result`
          : row.node_state === null
            ? `the agent ${where} was removed while running this execution; it will not report a result`
            : `the agent ${where} registered again at ${new Date(row.agent_registered_at as string).toISOString()} (it restarted) after taking this execution; it will not report a result`;
      if (await deps.finisher.finish(row.execution_id, { status: 'failed', error })) count += 1;
    }
    if (count > 0) deps.log.warn({ count }, 'executions of vanished agents failed');
    return count;
  }

  async function timeOutSilent(): Promise<number> {
    if (deps.maxSilenceMs <= 0) return 0;
    const rows = await findSilent(deps.db, new Date(deps.clock.now() - deps.maxSilenceMs), BATCH);
    let count = 0;
    for (const row of rows) {
      const hours = Math.round((deps.maxSilenceMs / 3_600_000) * 10) / 10;
      const error = `no report from the agent ${row.node_id}@${row.routed_version} for ${hours} h after it took this execution (execution_queue.max_silence); its status callback was probably lost`;
      if (await deps.finisher.finish(row.execution_id, { status: 'timeout', error })) count += 1;
    }
    if (count > 0) deps.log.warn({ count }, 'executions without a report for max_silence timed out');
    return count;
  }

  async function runOnce(): Promise<void> {
    await recoverOrphans();
    await failAbandoned();
    await timeOutSilent();
  }

  return {
    runOnce,
    start(): void {
      timer = setInterval(() => {
        running ??= runOnce()
          .catch((error) => deps.log.error({ err: error }, 'execution reaper pass failed'))
          .finally(() => {
            running = undefined;
          });
      }, intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}

export type Reaper = ReturnType<typeof createReaper>;
