/**
 * Schema changes that rewrite stored data: each is applied to rows written before it, on both
 * databases, and taken back down again.
 */
import { migrateLatest, openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { controlPlaneMigrations } from '../src/migrations/index.ts';

let handle: TestDatabase;

beforeEach(async () => {
  handle = await openTestDatabase();
});

afterEach(async () => {
  await handle.close();
});

/** The migration set as it was before the named migration landed. */
function before(name: string) {
  return {
    ...controlPlaneMigrations,
    migrations: controlPlaneMigrations.migrations.filter((m) => m.name < name),
  };
}

describe('accepts_webhook as strings', () => {
  const NAME = '20261126090000_accepts_webhook_strings';

  it('rewrites the booleans registered before it as "true" and "false", in the node and in its functions, and back', async () => {
    const { db } = handle;
    await migrateLatest(db, before(NAME));
    const now = new Date();
    const row = (nodeId: string, flag: boolean) => ({
      node_id: nodeId,
      version: '1.0.0',
      base_url: 'http://127.0.0.1:9',
      deployment_type: 'long_running',
      tags: JSON.stringify([]),
      metadata: JSON.stringify({}),
      reasoners: JSON.stringify([
        { id: 'a', tags: [], accepts_webhook: flag },
        { id: 'b', tags: [] },
      ]),
      skills: JSON.stringify([{ id: 's', tags: [], accepts_webhook: !flag }]),
      accepts_webhook: flag,
      lifecycle_status: 'ready',
      status_reason: 'registered',
      status_changed_at: now,
      last_seen_at: now,
      registered_at: now,
      updated_at: now,
    });
    await db('node_instances').insert([
      row('yes', true),
      row('no', false),
      { ...row('none', false), skills: '[]' },
    ]);

    await migrateLatest(db, controlPlaneMigrations);
    const after = await db('node_instances')
      .select('node_id', 'accepts_webhook', 'reasoners', 'skills')
      .orderBy('node_id');
    expect(after).toEqual([
      {
        node_id: 'no',
        accepts_webhook: 'false',
        reasoners: [
          { id: 'a', tags: [], accepts_webhook: 'false' },
          { id: 'b', tags: [] },
        ],
        skills: [{ id: 's', tags: [], accepts_webhook: 'true' }],
      },
      {
        node_id: 'none',
        accepts_webhook: 'false',
        reasoners: [
          { id: 'a', tags: [], accepts_webhook: 'false' },
          { id: 'b', tags: [] },
        ],
        skills: [],
      },
      {
        node_id: 'yes',
        accepts_webhook: 'true',
        reasoners: [
          { id: 'a', tags: [], accepts_webhook: 'true' },
          { id: 'b', tags: [] },
        ],
        skills: [{ id: 's', tags: [], accepts_webhook: 'false' }],
      },
    ]);
    await expect(
      db('node_instances').where({ node_id: 'yes' }).update({ accepts_webhook: 'maybe' }),
    ).rejects.toThrow(/node_instances_accepts_webhook_check/);
    await db('node_instances').where({ node_id: 'none' }).update({ accepts_webhook: 'warn' });

    const migration = controlPlaneMigrations.migrations.find((m) => m.name === NAME);
    await migration?.down(db);
    const down = await db('node_instances').select('node_id', 'accepts_webhook').orderBy('node_id');
    expect(down).toEqual([
      { node_id: 'no', accepts_webhook: false },
      { node_id: 'none', accepts_webhook: true },
      { node_id: 'yes', accepts_webhook: true },
    ]);
  });
});

describe('memory scope usage', () => {
  const NAME = '20261127091000_memory_scope_usage';

  it('counts the entries and vectors stored before it per scope, keeps counting after, and goes back down', async () => {
    const { db } = handle;
    await migrateLatest(db, before(NAME));
    const now = new Date();
    const entry = (scopeId: string, key: string, data: unknown) => ({
      scope: 'workflow',
      scope_id: scopeId,
      key,
      data: JSON.stringify(data),
      created_at: now,
      updated_at: now,
    });
    await db('memory_entries').insert([
      entry('wf_1', 'a', 'xyz'),
      entry('wf_1', 'bb', { n: 1 }),
      entry('wf_2', 'c', [1, 2]),
    ]);
    await db.raw(
      `insert into memory_vectors (scope, scope_id, key, dimensions, embedding, norm, metadata, created_at, updated_at)
       values ('workflow', 'wf_1', 'v', 3, '{1,0,0}', 1, '{}', now(), now())`,
    );

    await migrateLatest(db, controlPlaneMigrations);
    // Sizes: the key plus the jsonb as PostgreSQL prints it; a vector's key, 4 bytes a dimension and its metadata.
    const usage = await db('memory_scope_usage').select('scope_id', 'entries', 'bytes').orderBy('scope_id');
    const sizeA = 1 + '"xyz"'.length;
    const sizeB = 2 + '{"n": 1}'.length;
    const sizeV = 1 + 4 * 3 + '{}'.length;
    expect(usage.map((u) => ({ ...u, entries: Number(u.entries), bytes: Number(u.bytes) }))).toEqual([
      { scope_id: 'wf_1', entries: 3, bytes: sizeA + sizeB + sizeV },
      { scope_id: 'wf_2', entries: 1, bytes: 1 + '[1, 2]'.length },
    ]);
    // Writes of any kind keep counting; an emptied scope leaves no row.
    await db('memory_entries')
      .where({ scope_id: 'wf_1', key: 'a' })
      .update({ data: JSON.stringify('x') });
    await db('memory_entries').where({ scope_id: 'wf_2' }).delete();
    const after = await db('memory_scope_usage').select('scope_id', 'entries', 'bytes');
    expect(after.map((u) => ({ ...u, entries: Number(u.entries), bytes: Number(u.bytes) }))).toEqual([
      { scope_id: 'wf_1', entries: 3, bytes: sizeA - 2 + sizeB + sizeV },
    ]);

    const migration = controlPlaneMigrations.migrations.find((m) => m.name === NAME);
    await migration?.down(db);
    expect(await db.schema.hasTable('memory_scope_usage')).toBe(false);
    expect(await db.schema.hasColumn('memory_entries', 'bytes')).toBe(false);
    expect(await db.schema.hasColumn('memory_vectors', 'bytes')).toBe(false);
    // No trigger is left behind: a write goes through without the usage table.
    await db('memory_entries').insert(entry('wf_3', 'd', 1));
    expect(await db('memory_entries').where({ scope_id: 'wf_3' }).select('key')).toEqual([{ key: 'd' }]);
  });
});
