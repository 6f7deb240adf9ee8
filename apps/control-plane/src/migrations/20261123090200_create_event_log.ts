import type { Migration } from '@switchyard/shared/db';

/**
 * A durable, ordered log of the events SSE clients see, so a client reconnecting with
 * Last-Event-ID (to any replica) gets what it missed. `tx` is the writing transaction's id:
 * readers only read rows of transactions older than every transaction still running, and order
 * by (tx, id), so a row committed late never lands behind a cursor that has already passed it.
 */
export const createEventLog: Migration = {
  name: '20261123090200_create_event_log',
  async up(db) {
    await db.schema.createTable('event_log', (table) => {
      table.bigIncrements('id').primary();
      table.specificType('tx', 'xid8').notNullable().defaultTo(db.raw('pg_current_xact_id()'));
      table.text('stream').notNullable();
      table.text('event').notNullable();
      table.jsonb('payload').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      table.index(['stream', 'tx', 'id'], 'event_log_stream_idx');
      table.index(['created_at'], 'event_log_created_idx');
    });
  },
  async down(db) {
    await db.schema.dropTable('event_log');
  },
};
