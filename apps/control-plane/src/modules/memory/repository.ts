import type { Knex } from 'knex';
import { MEMORY_CHANGE, MEMORY_STREAM } from './events.ts';
import { QUOTA_SETTINGS, quotaBindings, type ScopeQuota } from './scope-quota.ts';
import { SCOPES, type Scope, type ScopeRef } from './scopes.ts';

/** One key-value entry as stored. */
export interface MemoryEntry {
  scope: Scope;
  scopeId: string;
  key: string;
  data: unknown;
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  scope: Scope;
  scope_id: string;
  key: string;
  data?: unknown;
  created_at: Date | string;
  updated_at: Date | string;
}

function entryOf(row: Row): MemoryEntry {
  return {
    scope: row.scope,
    scopeId: row.scope_id,
    key: row.key,
    data: row.data,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/**
 * Namespace of the advisory locks that order the writes of one key (the first argument of the
 * two-key pg_advisory_xact_lock, so hashes of memory keys never collide with other lock users).
 */
const KEY_LOCK_NAMESPACE = 0x4d454d4b; // "MEMK"

/*
 * Every write first takes a transaction-scoped advisory lock on its (scope, scope_id, key), in the
 * same statement, before it writes anything. The transaction id that orders the event log is only
 * assigned at the first write, so writers of one key get their ids in the order they got the lock:
 * the changes of a key appear on the streams in the order they were applied, and the last change
 * of a key in the log is always the value in the table. `on conflict ... do update` keeps each write
 * atomic (last write wins); the event row is written by the same statement, so no change goes
 * unrecorded and no event describes a change that did not happen.
 */
const KEY_LOCK = `pg_advisory_xact_lock(${KEY_LOCK_NAMESPACE}, hashtext(?::text || chr(31) || ?::text || chr(31) || ?::text))`;
const LOCK = `lock as (select ${KEY_LOCK})`;
const LOCK_WITH_QUOTA = `lock as (select ${KEY_LOCK}, ${QUOTA_SETTINGS})`;

function changePayload(action: 'set' | 'delete', alias: string): string {
  return `jsonb_build_object('scope', ${alias}.scope, 'scope_id', ${alias}.scope_id, 'key', ${alias}.key,
    'action', '${action}', 'data', ${alias}.data, 'timestamp', ?::text)`;
}

/**
 * Writes `data` (JSON text) under `key` in `ref`, and its change event; returns the entry. The
 * scope's usage trigger refuses the write (SQLSTATE SYQ01) when it would pass `quota`, which the
 * lock CTE sets for the statement before anything is written.
 */
export async function setEntry(
  db: Knex,
  ref: ScopeRef,
  key: string,
  dataText: string,
  at: Date,
  quota: ScopeQuota,
): Promise<MemoryEntry> {
  const stamp = at.toISOString();
  const result = await db.raw(
    `with ${LOCK_WITH_QUOTA},
     written as (
       insert into memory_entries (scope, scope_id, key, data, created_at, updated_at)
       select ?, ?, ?, ?::jsonb, ?::timestamptz, ?::timestamptz from lock
       on conflict (scope, scope_id, key)
       do update set data = excluded.data, updated_at = excluded.updated_at
       returning scope, scope_id, key, data, created_at, updated_at
     ),
     logged as (
       insert into event_log (stream, event, payload)
       select ?, ?, ${changePayload('set', 'written')} from written
     )
     select scope, scope_id, key, created_at, updated_at from written`,
    [
      ref.scope,
      ref.scopeId,
      key,
      ...quotaBindings(quota),
      ref.scope,
      ref.scopeId,
      key,
      dataText,
      stamp,
      stamp,
      MEMORY_STREAM,
      MEMORY_CHANGE,
      stamp,
    ],
  );
  return entryOf(result.rows[0] as Row);
}

/** Deletes `key` from `ref` and records the change; the removed entry, or undefined when absent. */
export async function deleteEntry(
  db: Knex,
  ref: ScopeRef,
  key: string,
  at: Date,
): Promise<MemoryEntry | undefined> {
  const result = await db.raw(
    `with ${LOCK},
     removed as (
       delete from memory_entries e using lock
       where e.scope = ? and e.scope_id = ? and e.key = ?
       returning e.scope, e.scope_id, e.key, e.data, e.created_at, e.updated_at
     ),
     logged as (
       insert into event_log (stream, event, payload)
       select ?, ?, ${changePayload('delete', 'removed')} from removed
     )
     select scope, scope_id, key, created_at, updated_at from removed`,
    [
      ref.scope,
      ref.scopeId,
      key,
      ref.scope,
      ref.scopeId,
      key,
      MEMORY_STREAM,
      MEMORY_CHANGE,
      at.toISOString(),
    ],
  );
  const row = result.rows[0] as Row | undefined;
  return row ? entryOf(row) : undefined;
}

/** The entry of `key` in the first of `refs` (in their order) that holds it. */
export async function findEntry(db: Knex, refs: ScopeRef[], key: string): Promise<MemoryEntry | undefined> {
  if (refs.length === 0) return undefined;
  const pairs = refs.map(() => '(?, ?)').join(', ');
  const result = await db.raw(
    `select scope, scope_id, key, data, created_at, updated_at from memory_entries
     where key = ? and (scope, scope_id) in (${pairs})
     order by array_position(?::text[], scope)
     limit 1`,
    [key, ...refs.flatMap((ref) => [ref.scope, ref.scopeId]), `{${SCOPES.join(',')}}`],
  );
  const row = result.rows[0] as Row | undefined;
  return row ? entryOf(row) : undefined;
}

/**
 * Up to `limit` entries of `ref` in key order, after `after`. Keys compare bytewise (`collate "C"`),
 * so the order and the page boundaries are the same on every database whatever its locale.
 */
export async function listEntries(
  db: Knex,
  ref: ScopeRef,
  page: { limit: number; after?: string },
): Promise<MemoryEntry[]> {
  const after = page.after === undefined ? '' : 'and key collate "C" > ?';
  const result = await db.raw(
    `select scope, scope_id, key, data, created_at, updated_at from memory_entries
     where scope = ? and scope_id = ? ${after}
     order by key collate "C"
     limit ?`,
    [ref.scope, ref.scopeId, ...(page.after === undefined ? [] : [page.after]), page.limit],
  );
  return (result.rows as Row[]).map(entryOf);
}
