import type { MemoryEntry } from './repository.ts';
import type { ScopeRef } from './scopes.ts';

/** Where an entry lives, as every memory answer spells it. */
export function refView(entry: ScopeRef & { key: string }) {
  return { key: entry.key, scope: entry.scope, scope_id: entry.scopeId };
}

/** An entry as get and list answer it: the value, where it came from, and when it was written. */
export function entryView(entry: MemoryEntry) {
  return {
    ...refView(entry),
    data: entry.data,
    created_at: entry.createdAt.toISOString(),
    updated_at: entry.updatedAt.toISOString(),
  };
}
