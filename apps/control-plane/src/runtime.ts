import type { Database } from '@switchyard/shared/db';
import { type Config, SETTINGS_TREE } from './config.ts';
import { createApprovalRuntime } from './modules/approvals/index.ts';
import { countQueued, createExecutionMetrics, createExecutionRuntime } from './modules/executions/index.ts';
import { createNodeRuntime, type NodeRuntime } from './modules/nodes/index.ts';
import { createForwarder } from './modules/observability/index.ts';
import { createWebhookDispatcher } from './modules/webhooks/index.ts';
import type { Clock } from './platform/clock.ts';
import { createLiveConfig } from './platform/config/live-config.ts';
import type { EventBus } from './platform/events/event-bus.ts';
import { createEventLog } from './platform/events/event-log.ts';
import type { Logger } from './platform/logger.ts';
import type { MetricsRegistry } from './platform/metrics/registry.ts';
import { createReplicaLease, expireOtherReplicas } from './platform/replicas/lease.ts';

export interface RuntimeDeps {
  db: Database;
  config: Config;
  events: EventBus;
  clock: Clock;
  log: Logger;
  metrics: MetricsRegistry;
  /** A node runtime built by the caller (tests pass one with their own probe or timings). */
  nodeRuntime?: NodeRuntime;
}

/**
 * The stateful parts behind the routes, wired to each other: this replica's lease, the event log,
 * webhook delivery, executions and nodes. Nothing runs in the background until start(); server.ts
 * starts it, tests drive the loops themselves (`executions.dispatcher.runOnce()` and the like).
 */
export function createRuntime(deps: RuntimeDeps) {
  const { db, config, events, clock, log } = deps;
  // The configuration in force: a reload (POST /api/v1/configs/reload) changes its `live`
  // settings, which everything below reads per use instead of keeping the start value.
  const live = createLiveConfig(SETTINGS_TREE, config);
  const agentApiKey = () => live.current().api.auth.apiKey || undefined;
  const replica = createReplicaLease({ db, clock, log });
  const eventLog = createEventLog({ db, events, log });
  const webhooks = createWebhookDispatcher({
    db,
    events,
    clock,
    log,
    settings: config.executionQueue,
    replicaId: replica.id,
    metrics: deps.metrics,
  });
  const executions = createExecutionRuntime({
    db,
    events,
    eventLog,
    clock,
    log,
    metrics: createExecutionMetrics(deps.metrics, () => countQueued(db)),
    settings: config.executionQueue,
    webhookSettings: config.executionQueue,
    wakeWebhooks: () => webhooks.wake(),
    replicaId: replica.id,
    apiKey: agentApiKey,
  });
  const nodes =
    deps.nodeRuntime ??
    createNodeRuntime({
      db,
      events,
      clock,
      lifecycle: config.nodes,
      health: config.nodeHealth,
      countActiveExecutions: executions.countActive,
      log,
      eventLog,
    });
  const approvals = createApprovalRuntime({
    db,
    events,
    clock,
    log,
    settings: config.approvals,
    replicaId: replica.id,
    apiKey: agentApiKey,
    executions,
  });
  const observability = createForwarder({
    db,
    events,
    eventLog,
    clock,
    log,
    settings: config.observability,
    allowPrivateNetworks: config.executionQueue.webhookAllowPrivateNetworks,
    replicaId: replica.id,
  });
  return {
    live,
    agentApiKey,
    replica,
    eventLog,
    webhooks,
    executions,
    nodes,
    observability,
    approvals,
    /** Takes the replica lease and starts every loop. */
    async start(): Promise<void> {
      await replica.start();
      eventLog.start();
      webhooks.start();
      executions.start();
      nodes.start();
      observability.start();
      approvals.start();
    },
    /**
     * Call once the server accepts requests. On the embedded database this process is the only one
     * there can be, so leases left by an earlier (crashed) process end now, and its abandoned work
     * is recovered without waiting for them to expire. Not sooner: the orphan grace, during which
     * an agent that took a call from the crashed process may still report it, counts from the end
     * of that lease, and a report can only arrive once this server listens. (With a slow start the
     * grace had passed before the agent could reach it, and such calls were dispatched twice.)
     */
    async acceptingRequests(options: { embedded: boolean }): Promise<void> {
      if (options.embedded) await expireOtherReplicas(db, replica.id, new Date(clock.now()));
    },
    /** Stops every loop (calls in flight get `graceMs` to return), then gives the lease up. */
    async stop(graceMs?: number): Promise<void> {
      await executions.stop(graceMs);
      await Promise.all([webhooks.stop(), nodes.stop(), observability.stop(), approvals.stop()]);
      await eventLog.stop();
      await replica.stop().catch((error) => log.warn({ err: error }, 'could not release the replica lease'));
    },
  };
}

export type Runtime = ReturnType<typeof createRuntime>;
