import type { Migration } from '@switchyard/shared/db';

/**
 * When the execution was last sent on its way (each dispatch, or the sync call's start):
 * `started_at` keeps the first one, and a re-dispatch after an agent restarted must not look
 * like work the old process took.
 */
export const addExecutionDispatchedAt: Migration = {
  name: '20261123090500_add_execution_dispatched_at',
  async up(db) {
    await db.schema.alterTable('executions', (table) => {
      table.timestamp('dispatched_at', { useTz: true }).nullable();
    });
    await db('executions').update({ dispatched_at: db.ref('started_at') });
  },
  async down(db) {
    await db.schema.alterTable('executions', (table) => {
      table.dropColumn('dispatched_at');
    });
  },
};
