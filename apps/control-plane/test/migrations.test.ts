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
