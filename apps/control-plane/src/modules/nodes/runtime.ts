import type { Knex } from 'knex';
import { type Clock, systemClock } from '../../platform/clock.ts';
import { defaultSettings } from '../../platform/config/load-config.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import { createHealthMonitor } from './health-monitor.ts';
import type { HealthProbe } from './health-probe.ts';
import { createPresenceManager } from './presence.ts';
import { type CountActiveExecutions, createNodeService, type ShutdownNotifier } from './service.ts';
import {
  type NodeHealthSettings,
  type NodeLifecycleSettings,
  nodeHealthSettings,
  nodeLifecycleSettings,
} from './settings.ts';
import { createNodeTransitions } from './transitions.ts';

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
  /** Where failures of background passes are logged; a fresh app logger when omitted. */
  log?: Logger;
  /** Wakes readers of the `nodes` event-log stream when node events are appended. */
  eventLog?: EventLog;
}

/**
 * Everything about nodes wired together: the node service the routes call, and the background
 * loops (presence sweep, reconcile, health monitor). The loops do not run until `start()`:
 * server.ts starts them; tests call `presence.tick()`, `presence.reconcile()` and
 * `health.runOnce()` with a clock they move.
 */
export function createNodeRuntime(deps: NodeRuntimeDeps) {
  const clock = deps.clock ?? systemClock;
  const lifecycle = deps.lifecycle ?? defaultSettings(nodeLifecycleSettings);
  const healthSettings = deps.health ?? defaultSettings(nodeHealthSettings);
  const log = deps.log ?? createLogger();
  const transitions = createNodeTransitions({
    db: deps.db,
    events: deps.events,
    clock,
    log,
    eventLog: deps.eventLog,
  });
  const presence = createPresenceManager({ db: deps.db, transitions, clock, settings: lifecycle, log });
  const health = createHealthMonitor({
    db: deps.db,
    transitions,
    clock,
    settings: healthSettings,
    probe: deps.probe,
    log,
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
