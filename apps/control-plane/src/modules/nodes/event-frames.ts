import { isNodeEvent, type NodeEvent } from './events.ts';

/**
 * Node events the UI stream carries: the spec's `node.registered` and `node.status_changed`,
 * plus `node.removed` (hard eviction) so a live fleet view can drop a row. `node.updated` stays
 * internal (cache invalidation).
 */
export const STREAMED_NODE_EVENTS: ReadonlySet<NodeEvent['type']> = new Set([
  'node.registered',
  'node.status_changed',
  'node.removed',
]);

/**
 * One Server-Sent Events frame for a node event, or null when the event is not streamed. The
 * JSON goes on a single `data:` line: JSON.stringify never emits a raw newline, so a hostile
 * string inside an event cannot break the framing.
 */
export function nodeEventFrame(event: Record<string, unknown>, nodeId?: string): string | null {
  if (!isNodeEvent(event) || !STREAMED_NODE_EVENTS.has(event.type)) return null;
  if (nodeId !== undefined && event.node_id !== nodeId) return null;
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
