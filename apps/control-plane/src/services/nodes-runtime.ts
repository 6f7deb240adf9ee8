import type { Knex } from 'knex';
import { defaultConfig } from '../config/load-config.ts';
import type { EventBus } from '../events/event-bus.ts';
import { createHealthMonitor } from './health-monitor.ts';
import type { HealthProbe } from './health-monitor-probe.ts';
import { type CountActiveExecutions, createNodeService, type ShutdownNotifier } from './nodes.ts';
import {
  type Clock,
  type NodeHealthSettings,
  type NodeLifecycleSettings,
  systemClock,
} from './nodes-settings.ts';
import { createNodeTransitions } from './nodes-transitions.ts';
import { createPresenceManager } from './presence.ts';

export interface NodeRuntimeDeps {
  db: Knex;
  events: EventBus;
  clock?: Clock;
  /** `config.nodes`; the spec's defaults when omitted. */
  lifecycle?: NodeLifecycleSettings;
  /** `config.nodeHealth`; the spec's defaults when omitted. */
  health?: NodeHealthSettings;
  probe?: HealthProbe;
  notifyShutdown?: ShutdownNotifier;
  /** Supplied by the execution capability; answers 0 until it exists (see NodeService). */
  countActiveExecutions?: CountActiveExecutions;
  drainTimeoutMs?: number;
  drainPollMs?: number;
  logError?: (error: unknown, context: string) => void;
}

/**
 * Everything about nodes wired together: the node service the routes call, and the background
 * loops (presence sweep, reconcile, health monitor). The loops do not run until `start()`:
 * server.ts starts them; tests call `presence.tick()`, `presence.reconcile()` and
 * `health.runOnce()` with a clock they move.
 */
export function createNodeRuntime(deps: NodeRuntimeDeps) {
  const clock = deps.clock ?? systemClock;
  const lifecycle = deps.lifecycle ?? defaultConfig().nodes;
  const healthSettings = deps.health ?? defaultConfig().nodeHealth;
  const logError = deps.logError ?? ((error, context) => console.error(`[control-plane] ${context}`, error));
  const transitions = createNodeTransitions({ db: deps.db, events: deps.events, clock, logError });
  const presence = createPresenceManager({ db: deps.db, transitions, clock, settings: lifecycle, logError });
  const health = createHealthMonitor({
    db: deps.db,
    transitions,
    clock,
    settings: healthSettings,
    probe: deps.probe,
    logError,
  });
  const nodes = createNodeService({
    db: deps.db,
    transitions,
    presence,
    health,
    clock,
    lifecycle,
    healthSettings,
    countActiveExecutions: deps.countActiveExecutions,
    notifyShutdown: deps.notifyShutdown,
    drainTimeoutMs: deps.drainTimeoutMs,
    drainPollMs: deps.drainPollMs,
  });
  return {
    clock,
    lifecycle,
    healthSettings,
    events: deps.events,
    transitions,
    presence,
    health,
    nodes,
    /** Starts the presence sweep, the reconcile pass and the health monitor. */
    start(): void {
      presence.start();
      health.start();
    },
    /** Stops the loops and waits for a pass in flight to finish. */
    async stop(): Promise<void> {
      await Promise.all([presence.stop(), health.stop()]);
    },
  };
}

export type NodeRuntime = ReturnType<typeof createNodeRuntime>;
