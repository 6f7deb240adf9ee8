import { z } from 'zod';
import type { MemoryChange } from './events.ts';
import { KeySchema, ScopeIdSchema, ScopeSchema } from './schemas.ts';

/**
 * A key pattern of the memory event streams: a key in which `*` matches any run of characters
 * (none included): `draft*`, `*draft`, `user.*.prefs`; without `*` it names one key exactly. `*`
 * is always a wildcard, also where a key contains it literally. Same bounds as keys (KeySchema).
 */
export const KeyPatternSchema = KeySchema.meta({
  description:
    'Only changes of keys matching this pattern: `*` matches any run of characters (`draft*`, `*draft`, `user.*.prefs`); without `*`, exactly this key.',
  example: 'user.*.prefs',
});

/** The filter parameters every memory event stream takes (SSE, WebSocket, history). */
export const MemoryEventFilterFields = {
  scope: ScopeSchema.optional().meta({ description: 'Only changes in this scope.' }),
  scope_id: ScopeIdSchema.optional().meta({
    description: 'Only changes in scopes with this id (`global` for the global scope).',
    example: 'wf_9',
  }),
  key: KeyPatternSchema.optional(),
};

const FiltersSchema = z.object(MemoryEventFilterFields);
export type MemoryEventFilters = z.infer<typeof FiltersSchema>;

/**
 * A key pattern split at its wildcards: `user.*.prefs` → `['user.', '.prefs']`, `draft` →
 * `['draft']`. The one definition both matchers below are built from.
 */
export function keyPatternParts(pattern: string): string[] {
  return pattern.split('*');
}

/**
 * Whether `key` matches the pattern `parts`, for live frames. The first part must start the key,
 * the last end it, and the ones between occur in order in what is left, each at its leftmost
 * place: the leftmost occurrence leaves the most room for the rest, so if any placement works,
 * this one does. Linear in the key per part, with no backtracking for a hostile pattern to exploit.
 */
export function keyMatches(parts: readonly string[], key: string): boolean {
  const first = parts[0]!;
  if (parts.length === 1) return key === first;
  const last = parts[parts.length - 1]!;
  if (key.length < first.length + last.length || !key.startsWith(first) || !key.endsWith(last)) {
    return false;
  }
  const end = key.length - last.length;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    const found = key.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/**
 * The pattern `parts` as an SQL LIKE pattern with `\` as escape character, for history reads:
 * `%`, `_` and `\` in a part are escaped so they match only themselves, and the parts are joined
 * with `%`, which matches any run of characters like `*`.
 */
export function keyPatternToLike(parts: readonly string[]): string {
  return parts.map((part) => part.replace(/[\\%_]/g, '\\$&')).join('%');
}

/** Filters ready to apply: to a live change in JS, or in the database for history. */
export interface CompiledMemoryFilters {
  matches(change: Pick<MemoryChange, 'scope' | 'scope_id' | 'key'>): boolean;
  /** The event log's page() filters (platform/events/event-log.ts). */
  payloadEquals: Record<string, string>;
  payloadLike: Record<string, string>;
}

/** Compiles the filters of one subscription or history request once. */
export function compileMemoryFilters(filters: MemoryEventFilters): CompiledMemoryFilters {
  const { scope, scope_id: scopeId, key } = filters;
  const parts = key === undefined ? undefined : keyPatternParts(key);
  const payloadEquals: Record<string, string> = {};
  if (scope !== undefined) payloadEquals.scope = scope;
  if (scopeId !== undefined) payloadEquals.scope_id = scopeId;
  return {
    matches: (change) =>
      (scope === undefined || change.scope === scope) &&
      (scopeId === undefined || change.scope_id === scopeId) &&
      (parts === undefined || (typeof change.key === 'string' && keyMatches(parts, change.key))),
    payloadEquals,
    payloadLike: parts === undefined ? {} : { key: keyPatternToLike(parts) },
  };
}
