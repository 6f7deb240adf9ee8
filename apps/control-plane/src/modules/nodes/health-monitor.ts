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
  /** Instances claimed per round trip to the database. */
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
  const batchSize = deps.batchSize ?? 100;
  const log = deps.log ?? createLogger();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

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

  /** One monitor round: claims every instance due for a probe, probes them, applies the results. */
  async function runOnce(): Promise<CheckOutcome[]> {
    const outcomes: CheckOutcome[] = [];
    for (;;) {
      const now = deps.clock.now();
      const due = await claimHealthChecks(
        deps.db,
        new Date(now),
        new Date(now + deps.settings.checkIntervalMs),
        batchSize,
      );
      if (due.length === 0) break;
      outcomes.push(...(await checkAll(due)));
      if (due.length < batchSize) break;
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
      await running;
    },
  };
}

export type HealthMonitor = ReturnType<typeof createHealthMonitor>;
