import { toIso } from '@switchyard/shared';
import type { Database } from '@switchyard/shared/db';

/** What a stored configuration is, without its text (list answers carry no bodies). */
export interface StoredConfigSummary {
  name: string;
  /** Counts every write and deletion of this name, gapless from 1. */
  version: number;
  /** The text's size in UTF-8 bytes. */
  bytes: number;
  updatedBy: string | null;
  /** When the current text was created (a re-creation after a deletion starts again). */
  createdAt: string;
  updatedAt: string;
}

/** A named configuration text stored in the database, with its versions (content/api/configuration.md). */
export interface StoredConfig extends StoredConfigSummary {
  /** The raw configuration text, as it was sent. */
  body: string;
}

/** One entry of a config's history: a stored text, or a deletion. */
export interface ConfigVersionSummary {
  name: string;
  version: number;
  /** True for the entry that recorded a deletion (it has no text). */
  deleted: boolean;
  bytes: number | null;
  updatedBy: string | null;
  createdAt: string;
}

export interface ConfigVersion extends ConfigVersionSummary {
  body: string | null;
}

/** The outcome of a write: the stored config and whether it created the name (201) or replaced it. */
export interface PutOutcome {
  config: StoredConfigSummary;
  created: boolean;
}

interface SummaryRow {
  name: string;
  version: number;
  bytes: number | string;
  updated_by: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

interface VersionRow {
  name: string;
  version: number;
  body?: unknown;
  bytes: number | string | null;
  updated_by: string | null;
  created_at: Date | string;
}

/** The database or a transaction on it (a Knex transaction is itself a Database). */
type Executor = Database;

/** The columns of a summary: the size is computed by the database, so lists never load bodies. */
const SUMMARY_COLUMNS = 'name, version, octet_length(body) as bytes, updated_by, created_at, updated_at';

function toSummary(row: SummaryRow): StoredConfigSummary {
  return {
    name: row.name,
    version: Number(row.version),
    bytes: Number(row.bytes),
    updatedBy: row.updated_by,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

function toVersion(row: VersionRow): ConfigVersion {
  return {
    name: row.name,
    version: Number(row.version),
    deleted: row.bytes === null,
    bytes: row.bytes === null ? null : Number(row.bytes),
    updatedBy: row.updated_by,
    createdAt: toIso(row.created_at),
    body: bodyText(row.body),
  };
}

/**
 * Bodies are read as their UTF-8 bytes and decoded here: PGlite decodes text results with a
 * TextDecoder that drops a leading byte-order mark, and a configuration must read back byte for
 * byte as it was stored.
 */
const BODY_BYTES = "convert_to(body, 'UTF8') as body";

function bodyText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(value as Uint8Array);
}

/** The stored config with this name, or undefined (also when it was deleted). */
export async function getStoredConfig(db: Executor, name: string): Promise<StoredConfig | undefined> {
  const row = await db('configs')
    .select(db.raw(`${SUMMARY_COLUMNS}, ${BODY_BYTES}`))
    .where({ name })
    .whereNotNull('body')
    .first();
  return row
    ? { ...toSummary(row as SummaryRow), body: bodyText((row as { body: unknown }).body)! }
    : undefined;
}

/** Every stored config, by name, without bodies. */
export async function listStoredConfigs(db: Executor): Promise<StoredConfigSummary[]> {
  const rows = await db('configs').select(db.raw(SUMMARY_COLUMNS)).whereNotNull('body').orderBy('name');
  return (rows as SummaryRow[]).map(toSummary);
}

/**
 * Deletes the versions of `name` older than the newest `keep`, in the writer's transaction (which
 * holds the name's row lock, so writers of one name prune one after another). Versions are
 * gapless, so the newest `keep` are those above `current - keep`; `current`, the version just
 * written, is always among them. Without `keep`, nothing is pruned.
 */
async function pruneVersions(trx: Executor, name: string, current: number, keep: number | undefined) {
  if (keep === undefined) return;
  if (!Number.isInteger(keep) || keep < 1) throw new RangeError('keepVersions must be a whole number from 1');
  await trx('config_versions')
    .where({ name })
    .andWhere('version', '<=', current - keep)
    .delete();
}

/**
 * Creates or replaces a stored config and records the new version, in one transaction. The
 * version is taken by one INSERT … ON CONFLICT DO UPDATE, which locks the name's row: concurrent
 * writers on any replica queue on that lock and each gets the next number, so versions are
 * distinct and gapless. `createdAt` survives a replacement and restarts on a re-creation.
 */
export async function putStoredConfig(
  db: Database,
  input: { name: string; body: string; updatedBy?: string | null; now?: Date; keepVersions?: number },
): Promise<PutOutcome> {
  const now = input.now ?? new Date();
  return db.transaction(async (trx) => {
    const result = await trx.raw(
      `insert into configs (name, body, updated_by, created_at, updated_at, version, created_version)
       values (?, ?, ?, ?, ?, 1, 1)
       on conflict (name) do update set
         body = excluded.body,
         updated_by = excluded.updated_by,
         updated_at = excluded.updated_at,
         version = configs.version + 1,
         created_version = case when configs.body is null then configs.version + 1 else configs.created_version end,
         created_at = case when configs.body is null then excluded.created_at else configs.created_at end
       returning ${SUMMARY_COLUMNS}, created_version`,
      [input.name, input.body, input.updatedBy ?? null, now, now],
    );
    const row = (result.rows as Array<SummaryRow & { created_version: number }>)[0]!;
    await trx('config_versions').insert({
      name: input.name,
      version: row.version,
      body: input.body,
      updated_by: input.updatedBy ?? null,
      created_at: now,
    });
    await pruneVersions(trx, input.name, Number(row.version), input.keepVersions);
    return { config: toSummary(row), created: Number(row.created_version) === Number(row.version) };
  });
}

/**
 * Deletes a stored config, keeping its history: the row stays as a tombstone (null body) and the
 * deletion is recorded as a version of its own. Undefined when there was nothing to delete.
 */
export async function deleteStoredConfig(
  db: Database,
  input: { name: string; updatedBy?: string | null; now?: Date; keepVersions?: number },
): Promise<{ version: number } | undefined> {
  const now = input.now ?? new Date();
  return db.transaction(async (trx) => {
    // RETURNING rather than the affected-row count: knex-pglite does not report the count.
    const rows = await trx('configs')
      .where({ name: input.name })
      .whereNotNull('body')
      .update({
        body: null,
        version: trx.raw('version + 1'),
        updated_by: input.updatedBy ?? null,
        updated_at: now,
      })
      .returning('version');
    const row = rows[0] as { version: number } | undefined;
    if (!row) return undefined;
    await trx('config_versions').insert({
      name: input.name,
      version: row.version,
      body: null,
      updated_by: input.updatedBy ?? null,
      created_at: now,
    });
    await pruneVersions(trx, input.name, Number(row.version), input.keepVersions);
    return { version: Number(row.version) };
  });
}

/**
 * Up to `limit` versions of a config after version `after`, oldest first, without bodies; empty
 * when the name was never stored (or nothing follows `after`).
 */
export async function listConfigVersions(
  db: Executor,
  name: string,
  page: { limit: number; after?: number },
): Promise<ConfigVersionSummary[]> {
  const rows = await db('config_versions')
    .select(db.raw('name, version, octet_length(body) as bytes, updated_by, created_at'))
    .where({ name })
    .andWhere('version', '>', page.after ?? 0)
    .orderBy('version')
    .limit(page.limit);
  return (rows as VersionRow[]).map((row) => {
    const { body: _body, ...summary } = toVersion(row);
    return summary;
  });
}

/**
 * The current version of a name (of its deletion, when it is deleted), or undefined when the name
 * was never stored: the `configs` row outlives a deletion.
 */
export async function currentVersion(db: Executor, name: string): Promise<number | undefined> {
  const row = (await db('configs').select('version').where({ name }).first()) as
    | { version: number }
    | undefined;
  return row === undefined ? undefined : Number(row.version);
}

/** One version of a config with its text (null for a deletion), or undefined. */
export async function getConfigVersion(
  db: Executor,
  name: string,
  version: number,
): Promise<ConfigVersion | undefined> {
  const row = await db('config_versions')
    .select(db.raw(`name, version, ${BODY_BYTES}, octet_length(body) as bytes, updated_by, created_at`))
    .where({ name, version })
    .first();
  return row ? toVersion(row as VersionRow) : undefined;
}
