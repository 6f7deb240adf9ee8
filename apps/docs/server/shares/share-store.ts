import { newId, toIso } from '@switchyard/shared';
import type { Database } from '@switchyard/shared/db';
import { SHARE_ID_PREFIX } from '../../contract/site-contract.ts';
import type { RunBundle } from './run-bundle.ts';

/** A share as stored: the bundle and when it was published (the URL depends on the site). */
export interface StoredShare {
  id: string;
  created_at: string;
  bundle: RunBundle;
}

export interface ShareStore {
  create(bundle: RunBundle): Promise<StoredShare>;
  find(id: string): Promise<StoredShare | undefined>;
}

interface RunShareRow {
  id: string;
  bundle_json: string;
  created_at: Date | string;
}

function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '');
}

/** The only module that names the `run_shares` table. */
export function createShareStore(db: Database, now: () => Date = () => new Date()): ShareStore {
  return {
    async create(bundle) {
      const id = newId(SHARE_ID_PREFIX);
      const bundleJson = JSON.stringify(bundle);
      const createdAt = now();
      await db('run_shares').insert({
        id,
        // PostgreSQL text cannot hold NUL; these two columns are for lookups, while the bundle
        // itself keeps every character (JSON escapes NUL as \u0000).
        workflow_id: withoutNul(bundle.workflow_id),
        title: withoutNul(bundle.title),
        bundle_json: bundleJson,
        bundle_bytes: Buffer.byteLength(bundleJson),
        created_at: createdAt,
      });
      return { id, created_at: toIso(createdAt), bundle };
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
