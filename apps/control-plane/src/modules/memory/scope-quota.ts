import { ProblemError } from '@switchyard/shared';
import type { ProblemCase } from '../../platform/openapi/problem.ts';
import { memorySettings } from './settings.ts';

/**
 * The quota of one memory scope instance: `memory.scope_max_entries` entries (keys and vectors
 * together) and `memory.scope_max_bytes` bytes. The database counts and checks it (see the
 * migration 20261127091000_memory_scope_usage): a trigger keeps a counter row per scope in the
 * writer's own transaction and refuses, with SQLSTATE SYQ01, a write that grows a scope past the
 * limits this module sets for the transaction. Counting there makes it exact for concurrent
 * writers on any replica: they queue on the counter row, and each sees the others' committed counts.
 */
export interface ScopeQuota {
  maxEntries: number;
  maxBytes: number;
}

/** The SQLSTATE the usage trigger raises for a write past a scope's quota. */
const QUOTA_SQLSTATE = 'SYQ01';

/** What the trigger reports about the scope, as JSON in the error's detail. */
interface QuotaReport {
  scope: string;
  scope_id: string;
  entries: number;
  bytes: number;
  added_entries: number;
  added_bytes: number;
  max_entries: number;
  max_bytes: number;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The 409 of a write the trigger refused, or undefined for any other error. */
function quotaProblem(error: unknown): ProblemError | undefined {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== QUOTA_SQLSTATE || typeof detail !== 'string') return undefined;
  const report = JSON.parse(detail) as QuotaReport;
  const where = `The ${report.scope} scope "${report.scope_id}"`;
  const full =
    report.added_entries > 0 && report.entries + report.added_entries > report.max_entries
      ? `${where} holds ${plural(report.entries, 'entry', 'entries')}, the most it may hold (memory.scope_max_entries is ${report.max_entries}): delete keys or vectors from it before adding new ones.`
      : `${where} holds ${plural(report.bytes, 'byte', 'bytes')} of keys and values; this write adds ${plural(report.added_bytes, 'byte', 'bytes')}, past its quota of ${report.max_bytes} (memory.scope_max_bytes): delete keys or vectors from it, or store less.`;
  return new ProblemError('quota_exceeded', full, {
    extensions: {
      scope: report.scope,
      scope_id: report.scope_id,
      entries: report.entries,
      bytes: report.bytes,
      max_entries: report.max_entries,
      max_bytes: report.max_bytes,
    },
  });
}

/**
 * Select-list items that hold the rest of the transaction's memory writes to a quota (bind
 * {@link quotaBindings}). Writes put them in a statement they run anyway, before their first
 * write (a set's lock CTE, a vector store's scope lock), so the quota costs no round trip; the
 * settings are transaction-local, so a pooled connection keeps nothing afterwards.
 */
export const QUOTA_SETTINGS = `set_config('switchyard.memory_scope_max_entries', ?, true),
  set_config('switchyard.memory_scope_max_bytes', ?, true)`;

export function quotaBindings(quota: ScopeQuota): string[] {
  return [String(quota.maxEntries), String(quota.maxBytes)];
}

/** Resolves as `write` does, except that a write the quota refused becomes 409 quota_exceeded. */
export async function refusedPastQuota<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw quotaProblem(error) ?? error;
  }
}

const DEFAULT_ENTRIES = memorySettings.scopeMaxEntries.default;
const DEFAULT_BYTES = memorySettings.scopeMaxBytes.default;

/** The 409 as the OpenAPI documents of memory set and vector store describe it. */
export const quotaExceededCase: ProblemCase = {
  code: 'quota_exceeded',
  when: `The write would take the scope past its quota: memory.scope_max_entries entries (keys and vectors together, ${DEFAULT_ENTRIES} by default) or memory.scope_max_bytes bytes of keys, values and vectors (${DEFAULT_BYTES} by default). Replacing a value with one no larger, and deleting, always work.`,
  detail: `The workflow scope "wf_9" holds ${DEFAULT_ENTRIES} entries, the most it may hold (memory.scope_max_entries is ${DEFAULT_ENTRIES}): delete keys or vectors from it before adding new ones.`,
  extensions: {
    scope: 'workflow',
    scope_id: 'wf_9',
    entries: DEFAULT_ENTRIES,
    bytes: 5242880,
    max_entries: DEFAULT_ENTRIES,
    max_bytes: DEFAULT_BYTES,
  },
};
