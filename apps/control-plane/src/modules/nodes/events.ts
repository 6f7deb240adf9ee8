import type { LifecycleStatus } from './schemas.ts';

/** The bus topic node presence and lifecycle changes travel on. */
export const NODES_TOPIC = 'nodes';

/** An instance was registered, or re-registered with the same id and version (a replacement). */
export interface NodeRegisteredEvent {
  type: 'node.registered';
  node_id: string;
  version: string;
  timestamp: string;
}

/** The lifecycle status of one instance changed; `reason` says which rule moved it. */
export interface NodeStatusChangedEvent {
  type: 'node.status_changed';
  node_id: string;
  version: string;
  old_status: LifecycleStatus | null;
  new_status: LifecycleStatus;
  reason: string;
  timestamp: string;
}

/** An instance was deleted by the hard-evict rule. */
export interface NodeRemovedEvent {
  type: 'node.removed';
  node_id: string;
  version: string;
  timestamp: string;
}

/** Something about an instance other than its status changed (traffic weight, custom health data). */
export interface NodeUpdatedEvent {
  type: 'node.updated';
  node_id: string;
  version: string;
  timestamp: string;
}

export type NodeEvent = NodeRegisteredEvent | NodeStatusChangedEvent | NodeRemovedEvent | NodeUpdatedEvent;

const NODE_EVENT_TYPES = new Set(['node.registered', 'node.status_changed', 'node.removed', 'node.updated']);

/** True for an event of the `nodes` topic with the members every node event has. */
export function isNodeEvent(event: Record<string, unknown>): event is NodeEvent & Record<string, unknown> {
  return (
    typeof event.type === 'string' &&
    NODE_EVENT_TYPES.has(event.type) &&
    typeof event.node_id === 'string' &&
    typeof event.version === 'string' &&
    typeof event.timestamp === 'string'
  );
}
