import type { Migration } from '@switchyard/shared/db';

/**
 * Executions by the time they ended: the dashboard's overview reads the last hour's outcomes,
 * durations and newest failures by completed_at, which no other index orders. Partial, so rows
 * still queued or running cost nothing until they end.
 */
export const executionsCompletedIndex: Migration = {
  name: '20261128090000_executions_completed_index',
  async up(db) {
    await db.raw(
      'create index executions_completed_idx on executions (completed_at, execution_id) where completed_at is not null',
    );
  },
  async down(db) {
    await db.raw('drop index executions_completed_idx');
  },
};
