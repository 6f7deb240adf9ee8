import { newId, toIso } from '@switchyard/shared';
import type { Database } from '@switchyard/shared/db';
import { SHARE_ID_PREFIX } from '../../contract/site-contract.ts';
import type { RunBundle } from './run-bundle.ts';
import type { WriteRecord } from './write-budget.ts';

/** A share as stored: the bundle and when it was published (the URL depends on the site). */
export interface StoredShare {
  id: string;
  created_at: string;
  bundle: RunBundle;
}

/** What a publish does inside its client's transaction. */
export interface ShareWriter {
  /** The client's writes after `since` (a write leaves the window at exactly `at + window`), oldest first. */
  recentWrites(since: Date): Promise<WriteRecord[]>;
  /** Stores the bundle (already serialised as `json`) and records the write for the client. */
  insert(bundle: RunBundle, json: string, at: Date): Promise<StoredShare>;
  /** Deletes every client's write records older than `before`: they no longer count. */
  forgetWritesBefore(before: Date): Promise<void>;
}

export interface ShareStore {
  /**
   * Runs `work` in one transaction that holds the client's write lock, so two publishes from one
   * address (on any replica sharing the database) are counted one after the other, never both
   * against the same earlier total.
   */
  asWriter<T>(client: string, work: (writer: ShareWriter) => Promise<T>): Promise<T>;
  find(id: string): Promise<StoredShare | undefined>;
}

interface RunShareRow {
  id: string;
  bundle_json: string;
  created_at: Date | string;
}

interface WriteRow {
  bytes: number;
  created_at: Date | string;
}

/** Namespace of the advisory locks taken here (the two-key form keeps them apart from others). */
const WRITER_LOCK_CLASS = 0x5348_4152; // "SHAR"

function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '');
}

/** The only module that names the `run_shares` and `run_share_writes` tables. */
export function createShareStore(db: Database): ShareStore {
  return {
    async asWriter(client, work) {
      return db.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [WRITER_LOCK_CLASS, client]);
        return work({
          async recentWrites(since) {
            const rows = (await trx('run_share_writes')
              .where({ client })
              .andWhere('created_at', '>', since)
              .orderBy('created_at', 'asc')
              .select('bytes', 'created_at')) as WriteRow[];
            return rows.map((row) => ({ bytes: row.bytes, at: new Date(row.created_at) }));
          },
          async insert(bundle, json, at) {
            const id = newId(SHARE_ID_PREFIX);
            const bytes = Buffer.byteLength(json);
            await trx('run_shares').insert({
              id,
              // PostgreSQL text cannot hold NUL; these two columns are for lookups, while the bundle
              // itself keeps every character (JSON escapes NUL as \u0000).
              workflow_id: withoutNul(bundle.workflow_id),
              title: withoutNul(bundle.title ?? ''),
              bundle_json: json,
              bundle_bytes: bytes,
              created_at: at,
            });
            await trx('run_share_writes').insert({ client, bytes, created_at: at });
            return { id, created_at: toIso(at), bundle };
          },
          async forgetWritesBefore(before) {
            await trx('run_share_writes').where('created_at', '<', before).delete();
          },
        });
      });
    },
    async find(id) {
      const row = (await db('run_shares').where({ id }).first('id', 'bundle_json', 'created_at')) as
        | RunShareRow
        | undefined;
      if (!row) return undefined;
      return {
        id: row.id,
        created_at: toIso(row.created_at),
        bundle: JSON.parse(row.bundle_json) as RunBundle,
      };
    },
  };
}
