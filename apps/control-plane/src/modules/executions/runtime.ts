import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import type { Logger } from '../../platform/logger.ts';
import type { WebhookSettings } from '../webhooks/index.ts';
import { createAgentClient } from './agent-client.ts';
import { createDispatcher } from './dispatcher.ts';
import { createFinisher } from './finisher.ts';
import { createLocalCalls } from './local-calls.ts';
import { createExecutionLogs } from './logs.ts';
import type { ExecutionMetrics } from './metrics.ts';
import { createExecutionQueries } from './queries.ts';
import { createReaper } from './reaper.ts';
import { countActive } from './repository.ts';
import { createResolver } from './resolver.ts';
import { createExecutionService, type ExecutionQueueSettings } from './service.ts';
import { createExecutionWaiting } from './waiting.ts';

export interface ExecutionRuntimeDeps {
  db: Knex;
  events: EventBus;
  eventLog: EventLog;
  clock: Clock;
  log: Logger;
  metrics: ExecutionMetrics;
  settings: ExecutionQueueSettings;
  webhookSettings: WebhookSettings;
  /** Wakes the webhook workers after a delivery was written. */
  wakeWebhooks: () => void;
  /** This process's replica id (see platform/replicas): claims are marked with it. */
  replicaId: string;
  /** Sent to agents as X-API-Key when API-key authentication is on; read per call (reloads change it). */
  apiKey?: () => string | undefined;
}

/**
 * Everything about executions wired together: the service the routes call, the dispatcher that
 * forwards the queue, and the reaper. Like the node runtime, the loops run only after start():
 * server.ts starts them; tests call `dispatcher.runOnce()` and `reaper.runOnce()`.
 */
export function createExecutionRuntime(deps: ExecutionRuntimeDeps) {
  const { db, clock, log } = deps;
  const resolver = createResolver({ db, events: deps.events, clock });
  const agents = createAgentClient({
    apiKey: deps.apiKey,
    connections: Math.max(16, deps.settings.dispatchConcurrency),
  });
  const finisher = createFinisher({
    db,
    clock,
    events: deps.events,
    eventLog: deps.eventLog,
    metrics: deps.metrics,
    log,
    wakeWebhooks: deps.wakeWebhooks,
    replicaId: deps.replicaId,
  });
  const dispatcher = createDispatcher({
    db,
    clock,
    log,
    events: deps.events,
    eventLog: deps.eventLog,
    resolver,
    agents,
    finisher,
    replicaId: deps.replicaId,
    concurrency: deps.settings.dispatchConcurrency,
    perNode: deps.settings.maxConcurrentPerNode,
    answerTimeoutMs: deps.settings.answerTimeoutMs,
  });
  const reaper = createReaper({
    db,
    clock,
    log,
    finisher,
    replicaId: deps.replicaId,
    inFlight: () => [...dispatcher.inFlightIds(), ...service.inFlightIds()],
    orphanGraceMs: deps.settings.orphanGraceMs,
    maxSilenceMs: deps.settings.maxSilenceMs,
    wakeDispatchers: () => dispatcher.wake(),
  });
  const service = createExecutionService({
    db,
    clock,
    log,
    eventLog: deps.eventLog,
    resolver,
    agents,
    finisher,
    settings: deps.settings,
    webhookSettings: deps.webhookSettings,
    replicaId: deps.replicaId,
    wakeDispatchers: () => dispatcher.wake(),
    dispatchNow: (nodeId) => dispatcher.dispatchNow(nodeId),
  });
  const waiting = createExecutionWaiting({ eventLog: deps.eventLog, finisher });
  return {
    service,
    queries: createExecutionQueries(db),
    logs: createExecutionLogs({ db, now: () => new Date(clock.now()) }),
    localCalls: createLocalCalls({ db, clock, eventLog: deps.eventLog, resolver, finisher, waiting }),
    dispatcher,
    reaper,
    finisher,
    /** The `waiting` state's transitions, for the approvals feature. */
    waiting,
    /** Executions an instance may be working on, for the node shutdown drain. */
    countActive: (nodeId: string, version: string) => countActive(db, nodeId, version),
    start(): void {
      dispatcher.start();
      reaper.start();
    },
    /** Stops claiming and reaping, lets calls in flight return (up to `graceMs`), closes connections. */
    async stop(graceMs = 5_000): Promise<void> {
      await dispatcher.stop();
      await reaper.stop();
      await Promise.race([
        dispatcher.drain(),
        new Promise((resolve) => setTimeout(resolve, graceMs).unref()),
      ]);
      // An agent may hold a call for hours (the async lane has no time limit): whatever is still
      // open now is abandoned, not waited for, or the process would never exit.
      dispatcher.abandonAll();
      await agents.destroy();
    },
  };
}

export type ExecutionRuntime = ReturnType<typeof createExecutionRuntime>;
