import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { ValuesOf } from '../../platform/config/setting.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import { findInfinite, findUnstorable } from '../../platform/json-storable.ts';
import { MEMORY_STREAM } from './events.ts';
import type { MemoryMetrics } from './metrics.ts';
import { deleteEntry, findEntry, listEntries, type MemoryEntry, setEntry } from './repository.ts';
import { refusedPastQuota } from './scope-quota.ts';
import { notFoundIn, readScopes, type ScopeRef, type ScopeRequest, writeScope } from './scopes.ts';
import type { memorySettings } from './settings.ts';

export type MemorySettings = ValuesOf<typeof memorySettings>;

export interface MemoryServiceDeps {
  db: Knex;
  eventLog: Pick<EventLog, 'announce'>;
  clock: Clock;
  metrics: MemoryMetrics;
  settings: Pick<MemorySettings, 'maxValueBytes' | 'scopeMaxEntries' | 'scopeMaxBytes'>;
}

/** A path inside a value as the errors list spells fields: `data.items[2].name`. */
function fieldPath(path: (string | number)[]): string {
  return path.reduce<string>(
    (text, part) => (typeof part === 'number' ? `${text}[${part}]` : `${text}.${part}`),
    'data',
  );
}

/**
 * Key-value memory: writes to one scope (chosen by scopes.ts), reads through the scope order,
 * lists one scope. Each write is one statement that also records its change in the event log;
 * the log is announced after it commits, so subscribers on every replica hear of it.
 */
export function createMemoryService(deps: MemoryServiceDeps) {
  const { db, eventLog, clock, metrics, settings } = deps;
  const count = (type: string, scope: string) => metrics.operationsTotal.inc({ type, scope });
  const quota = { maxEntries: settings.scopeMaxEntries, maxBytes: settings.scopeMaxBytes };

  /**
   * The stored JSON text of a value, refused when the database cannot keep it, when it holds a
   * number JSON.stringify would write as null, or when it is too big.
   */
  function storable(data: unknown): string {
    const unstorable = findUnstorable(data);
    if (unstorable) {
      const field = fieldPath(unstorable);
      throw new ProblemError(
        'invalid_request',
        `${field} holds text the database cannot store (a NUL character or a lone UTF-16 surrogate).`,
        { extensions: { errors: [{ field, message: 'contains U+0000 or a lone surrogate' }] } },
      );
    }
    const infinite = findInfinite(data);
    if (infinite) {
      const field = fieldPath(infinite);
      throw new ProblemError(
        'invalid_request',
        `${field} is a number beyond double precision (about ±1.8e308): it would be stored as null.`,
        { extensions: { errors: [{ field, message: 'is beyond ±1.8e308' }] } },
      );
    }
    const text = JSON.stringify(data);
    const bytes = Buffer.byteLength(text);
    if (bytes > settings.maxValueBytes) {
      throw new ProblemError(
        'payload_too_large',
        `The value is ${bytes} bytes as JSON; memory values are limited to ${settings.maxValueBytes} bytes (memory.max_value_bytes).`,
      );
    }
    return text;
  }

  return {
    /**
     * Writes `data` under `key`; the scope is the named one or the most specific the headers name.
     * A write that would take the scope past its quota answers 409 quota_exceeded and changes nothing.
     */
    async set(request: ScopeRequest, key: string, data: unknown): Promise<MemoryEntry> {
      const ref = writeScope(request);
      const text = storable(data);
      const at = new Date(clock.now());
      const entry = await refusedPastQuota(setEntry(db, ref, key, text, at, quota));
      eventLog.announce(MEMORY_STREAM);
      count('set', ref.scope);
      return { ...entry, data };
    },

    /**
     * The entry of `key` in the first scope that has it (workflow, session, actor, global), or in
     * the named scope only. Missing → 404 not_found; SDKs read that as "not set".
     */
    async get(request: ScopeRequest, key: string): Promise<MemoryEntry> {
      const refs = readScopes(request);
      const entry = await findEntry(db, refs, key);
      count('get', entry?.scope ?? 'none');
      if (entry) return entry;
      throw notFoundIn('memory key', key, request, refs);
    },

    /** Removes `key` from one scope (chosen as for set); says whether there was something to remove. */
    async delete(request: ScopeRequest, key: string): Promise<{ ref: ScopeRef; deleted: boolean }> {
      const ref = writeScope(request);
      const removed = await deleteEntry(db, ref, key, new Date(clock.now()));
      if (removed) eventLog.announce(MEMORY_STREAM);
      count('delete', ref.scope);
      return { ref, deleted: removed !== undefined };
    },

    /** One page of the entries of one scope (chosen as for set), in key order. */
    async list(
      request: ScopeRequest,
      page: { limit: number; after?: string },
    ): Promise<{ ref: ScopeRef; entries: MemoryEntry[]; hasMore: boolean }> {
      const ref = writeScope(request);
      // One more than asked for says whether another page follows without a count query.
      const rows = await listEntries(db, ref, { limit: page.limit + 1, after: page.after });
      count('list', ref.scope);
      return { ref, entries: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
    },
  };
}

export type MemoryService = ReturnType<typeof createMemoryService>;
