import type { Scope } from './scopes.ts';

/** The event-log stream memory changes are appended to (platform/events/event-log.ts). */
export const MEMORY_STREAM = 'memory';

/** The one event name of the memory streams: SSE `event:` and the frames' `type`. */
export const MEMORY_CHANGE = 'memory_change';

/**
 * A change of key-value memory as the event log keeps it: written in the same statement as the
 * change itself, so a change is never streamed without having happened nor happens unstreamed.
 * Frames add `type` (and `id`, the entry's cursor).
 */
export interface MemoryChange {
  scope: Scope;
  scope_id: string;
  key: string;
  action: 'set' | 'delete';
  /** The value written; for a delete, the value removed. */
  data: unknown;
  /** When the change was applied (ISO 8601, UTC). */
  timestamp: string;
}
