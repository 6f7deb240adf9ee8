import type { Clock } from '../../platform/clock.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import { type HealthProbe, httpHealthProbe, type ProbeResult } from './health-probe.ts';
import { moveAfterProbe } from './lifecycle.ts';
import { claimHealthChecks, type Executor, type InstanceKey } from './repository.ts';
import type { NodeInstanceRecord } from './schemas.ts';
import type { NodeHealthSettings } from './settings.ts';
import { movePatch, type NodeTransitions } from './transitions.ts';

export interface HealthMonitorDeps {
  db: Executor;
  transitions: NodeTransitions;
  clock: Clock;
  settings: NodeHealthSettings;
  probe?: HealthProbe;
  /** Probes in flight at once. */
  concurrency?: number;
  /**
   * Most instances claimed per round trip to the database; fewer when probing that many could
   * outlast the claim (see claimLimit).
   */
  batchSize?: number;
  /** Where failures of background passes are logged; a fresh app logger when omitted. */
  log?: Logger;
}

/** One instance checked by a monitor round. */
export interface CheckOutcome {
  key: InstanceKey;
  result: ProbeResult;
  record: NodeInstanceRecord | undefined;
}

/**
 * The health monitor: probes `GET {base_url}/health` of every instance that is not offline,
 * every `checkIntervalMs`, with `checkTimeoutMs` per probe, and applies the health rules
 * (consecutive failures → degraded, a healthy run of `recoveryDebounceMs` → ready). Each due
 * instance is claimed in the database before it is probed, so replicas sharing the database
 * split the work rather than each probing every agent.
 */
export function createHealthMonitor(deps: HealthMonitorDeps) {
  const probe = deps.probe ?? httpHealthProbe;
  const concurrency = deps.concurrency ?? 8;
  const log = deps.log ?? createLogger();

  /**
   * A claim holds its instances for one check interval: past it they are due again, and another
   * replica (or this one) claims and probes them a second time, counting a failure twice. So a
   * batch is no larger than the probes can finish in half an interval when every one of them
   * waits out its timeout (100 agents that hang, probed 8 at a time with a 5 s timeout, would
   * take over a minute against a 30 s claim).
   */
  function claimLimit(): number {
    const { checkIntervalMs, checkTimeoutMs } = deps.settings;
    const waves = Math.max(1, Math.floor(checkIntervalMs / (2 * Math.max(1, checkTimeoutMs))));
    return Math.min(deps.batchSize ?? 100, concurrency * waves);
  }
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopping = false;

  async function applyResult(
    instance: NodeInstanceRecord,
    result: ProbeResult,
  ): Promise<NodeInstanceRecord | undefined> {
    const applied = await deps.transitions.apply(instance, (current, at) => {
      // Rules look at the instance as it is now: it may have gone offline during the probe.
      const outcome = moveAfterProbe(current, result.ok, at.getTime(), deps.settings);
      return {
        ...movePatch(outcome.move, at),
        healthFailures: outcome.consecutiveFailures,
        healthySince: outcome.healthySince === null ? null : new Date(outcome.healthySince),
        lastCheckAt: at,
        lastCheckOk: result.ok,
        lastCheckStatusCode: result.statusCode,
        lastCheckError: result.error,
        lastCheckDurationMs: result.durationMs,
        nextCheckAt: new Date(at.getTime() + deps.settings.checkIntervalMs),
      };
    });
    return applied?.record;
  }

  /** Probes one instance now, whatever its schedule, and applies the result. */
  async function checkInstance(instance: NodeInstanceRecord): Promise<CheckOutcome> {
    const result = await probe(instance.baseUrl, deps.settings.checkTimeoutMs);
    const fields = {
      node_id: instance.nodeId,
      version: instance.version,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
    };
    // Every agent is probed every check interval: a healthy answer is routine, a failed one is
    // what an operator looks for (it moves the agent towards degraded).
    if (result.ok) log.debug(fields, `health probe of ${instance.nodeId}@${instance.version}: ok`);
    else
      log.warn(
        { ...fields, error: result.error },
        `health probe of ${instance.nodeId}@${instance.version} failed: ${result.error}`,
      );
    const record = await applyResult(instance, result);
    return { key: instance, result, record };
  }

  /** Probes many instances with bounded concurrency. */
  async function checkAll(instances: NodeInstanceRecord[]): Promise<CheckOutcome[]> {
    const outcomes: CheckOutcome[] = [];
    let next = 0;
    const worker = async () => {
      while (next < instances.length) {
        const instance = instances[next++]!;
        try {
          outcomes.push(await checkInstance(instance));
        } catch (error) {
          log.error({ err: error }, `health check of ${instance.nodeId}@${instance.version}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, instances.length) }, worker));
    return outcomes;
  }

  /**
   * One monitor round: claims the instances due when it started, a batch at a time, probes them,
   * applies the results. Instances that fall due while it runs wait for the next round, so a
   * round ends however long its probes take (and stop() does not wait on an endless one).
   */
  async function runOnce(): Promise<CheckOutcome[]> {
    const outcomes: CheckOutcome[] = [];
    const limit = claimLimit();
    const dueBy = new Date(deps.clock.now());
    while (!stopping) {
      const due = await claimHealthChecks(
        deps.db,
        dueBy,
        new Date(deps.clock.now() + deps.settings.checkIntervalMs),
        limit,
      );
      if (due.length === 0) break;
      outcomes.push(...(await checkAll(due)));
      if (due.length < limit) break;
    }
    return outcomes;
  }

  return {
    runOnce,
    checkInstance,
    checkAll,
    /**
     * Runs rounds in the background. Rounds start at most every 5 s (sooner when the check
     * interval is shorter) so a newly registered instance is probed soon after it appears;
     * each instance is still probed only once per check interval.
     */
    start(): void {
      if (timer) return;
      stopping = false;
      const period = Math.max(10, Math.min(deps.settings.checkIntervalMs, 5000));
      const round = () => {
        running = runOnce()
          .catch((error) => log.error({ err: error }, 'health monitor round'))
          .finally(() => {
            running = undefined;
            if (timer) timer = setTimeout(round, period).unref();
          });
      };
      timer = setTimeout(round, 0).unref();
    },
    async stop(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      // The round under way finishes the batch it claimed and claims no other.
      stopping = true;
      await running;
    },
  };
}

export type HealthMonitor = ReturnType<typeof createHealthMonitor>;
