import { toIso } from '@switchyard/shared';
import type { Database } from '@switchyard/shared/db';

/** A named configuration text stored in the database (spec §2 "Stored configuration"). */
export interface StoredConfig {
  name: string;
  /** The raw configuration text, as it was sent. */
  body: string;
  updatedBy: string | null;
  createdAt: string;
  updatedAt: string;
}

interface ConfigRow {
  name: string;
  body: string;
  updated_by: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The database or a transaction on it (a Knex transaction is itself a Database). */
type Executor = Database;

function toStoredConfig(row: ConfigRow): StoredConfig {
  return {
    name: row.name,
    body: row.body,
    updatedBy: row.updated_by,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

/** The stored config with this name, or undefined. */
export async function getStoredConfig(db: Executor, name: string): Promise<StoredConfig | undefined> {
  const row = await db<ConfigRow>('configs').where({ name }).first();
  return row ? toStoredConfig(row) : undefined;
}

/** Every stored config, by name. */
export async function listStoredConfigs(db: Executor): Promise<StoredConfig[]> {
  const rows = await db<ConfigRow>('configs').select('*').orderBy('name');
  return rows.map(toStoredConfig);
}

/** Creates or replaces a stored config; `createdAt` survives a replacement. */
export async function putStoredConfig(
  db: Executor,
  input: { name: string; body: string; updatedBy?: string | null },
): Promise<StoredConfig> {
  const now = new Date();
  const [row] = await db<ConfigRow>('configs')
    .insert({
      name: input.name,
      body: input.body,
      updated_by: input.updatedBy ?? null,
      created_at: now,
      updated_at: now,
    })
    .onConflict('name')
    .merge(['body', 'updated_by', 'updated_at'])
    .returning('*');
  return toStoredConfig(row as ConfigRow);
}

/** Deletes a stored config; true when it existed. */
export async function deleteStoredConfig(db: Executor, name: string): Promise<boolean> {
  // RETURNING rather than the affected-row count: knex-pglite does not report the count.
  const deleted = await db('configs').where({ name }).delete().returning('name');
  return deleted.length > 0;
}
