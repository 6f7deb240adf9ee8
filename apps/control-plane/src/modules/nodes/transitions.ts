import { toIso } from '@switchyard/shared';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { appendEvents, type EventLog } from '../../platform/events/event-log.ts';
import type { Logger } from '../../platform/logger.ts';
import { NODES_TOPIC, type NodeEvent } from './events.ts';
import type { Move } from './lifecycle.ts';
import {
  type Executor,
  findInstance,
  type InstanceKey,
  type InstancePatch,
  updateInstanceIfRevision,
} from './repository.ts';
import type { LifecycleStatus, NodeInstanceRecord, StatusReason } from './schemas.ts';

export interface NodeTransitionsDeps {
  db: Executor;
  events: EventBus;
  clock: Clock;
  log: Logger;
  /**
   * Wakes readers of the `nodes` event-log stream after an append; without it they find the
   * entries with their safety poll.
   */
  eventLog?: EventLog;
}

/**
 * The event-log stream node events are also appended to, so consumers that must not miss one
 * (the observability forwarder) read them durably and resume after a restart; the bus stays the
 * live path of the nodes SSE stream and the caches.
 */
export const NODES_STREAM = 'nodes';

/** The outcome of {@link NodeTransitions.apply}: the instance as it now is, and whether a write happened. */
export interface Applied {
  record: NodeInstanceRecord;
  written: boolean;
  statusChanged: boolean;
}

/** Turns a decided move into the columns that record it. */
export function movePatch(move: Move, at: Date): InstancePatch {
  return move ? { lifecycleStatus: move.status, statusReason: move.reason, statusChangedAt: at } : {};
}

const MAX_ATTEMPTS = 8;

/**
 * Applies decisions to instances with optimistic locking, and announces what changed on the
 * `nodes` topic. Events go out after the write is committed and never fail the caller: the
 * database is the truth, events are hints for streams and caches.
 */
export function createNodeTransitions(deps: NodeTransitionsDeps) {
  /**
   * Announces events together: every bus hint at once, then one INSERT into the log and one
   * NOTIFY for the stream. A presence sweep may expire hundreds of instances in one UPDATE; two
   * statements per instance in turn, each waiting for a pool connection behind the fleet's
   * heartbeats, made one pass take minutes at 5,000 agents (bench/control-plane/fleet-sim.mjs).
   */
  async function publishAll(events: NodeEvent[]): Promise<void> {
    if (events.length === 0) return;
    await Promise.all(
      events.map(async (event) => {
        try {
          await deps.events.publish(NODES_TOPIC, event);
        } catch (error) {
          deps.log.error({ err: error }, `publishing ${event.type} for ${event.node_id}@${event.version}`);
        }
      }),
    );
    try {
      await appendEvents(
        deps.db,
        events.map((event) => ({ stream: NODES_STREAM, event: event.type, payload: event })),
      );
      deps.eventLog?.announce(NODES_STREAM);
    } catch (error) {
      const names = events.map((event) => `${event.node_id}@${event.version}`).join(', ');
      deps.log.error({ err: error }, `logging ${events.length} node event(s) for ${names}`);
    }
  }

  function statusChangedEvent(
    record: NodeInstanceRecord,
    oldStatus: LifecycleStatus | null,
    reason: StatusReason,
  ): NodeEvent {
    return {
      type: 'node.status_changed',
      node_id: record.nodeId,
      version: record.version,
      old_status: oldStatus,
      new_status: record.lifecycleStatus,
      reason,
      timestamp: record.statusChangedAt,
    };
  }

  function announcementEvent(
    type: 'node.registered' | 'node.removed' | 'node.updated',
    key: InstanceKey,
  ): NodeEvent {
    return { type, node_id: key.nodeId, version: key.version, timestamp: toIso(deps.clock.now()) };
  }

  return {
    publish: (event: NodeEvent) => publishAll([event]),
    publishAll,
    statusChangedEvent,
    announcementEvent,

    statusChanged(
      record: NodeInstanceRecord,
      oldStatus: LifecycleStatus | null,
      reason: StatusReason,
    ): Promise<void> {
      return publishAll([statusChangedEvent(record, oldStatus, reason)]);
    },

    /** Announces an event stamped with the clock's current time. */
    announce(type: 'node.registered' | 'node.removed' | 'node.updated', key: InstanceKey): Promise<void> {
      return publishAll([announcementEvent(type, key)]);
    },

    /**
     * Reads the instance, lets `decide` return a patch (or null for "nothing to do"), and writes
     * it only if nobody changed the instance in between; otherwise reads and decides again.
     * Undefined when the instance does not exist. `fresh` is a record the caller has just read
     * (e.g. returned by the heartbeat UPDATE): it saves the first read, and a stale one only
     * costs a retry.
     */
    async apply(
      key: InstanceKey,
      decide: (current: NodeInstanceRecord, at: Date) => InstancePatch | null,
      fresh?: NodeInstanceRecord,
    ): Promise<Applied | undefined> {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = attempt === 0 && fresh ? fresh : await findInstance(deps.db, key);
        if (!current) return undefined;
        const at = new Date(deps.clock.now());
        const patch = decide(current, at);
        if (!patch) return { record: current, written: false, statusChanged: false };
        const updated = await updateInstanceIfRevision(deps.db, key, current.revision, patch, at);
        if (!updated) continue;
        const changed = updated.lifecycleStatus !== current.lifecycleStatus;
        if (changed)
          await publishAll([statusChangedEvent(updated, current.lifecycleStatus, updated.statusReason)]);
        return { record: updated, written: true, statusChanged: changed };
      }
      throw new Error(
        `node instance ${key.nodeId}@${key.version} kept changing; gave up after ${MAX_ATTEMPTS} attempts`,
      );
    },
  };
}

export type NodeTransitions = ReturnType<typeof createNodeTransitions>;
