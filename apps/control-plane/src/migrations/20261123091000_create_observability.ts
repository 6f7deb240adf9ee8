import type { Migration } from '@switchyard/shared/db';

/**
 * The observability forwarder: where events go (one row), how far each event-log stream has been
 * forwarded and who forwards (one row, leased, so one replica forwards at a time and a new one
 * resumes where the last left off), and the batches the collector never took (the dead-letter queue).
 */
export const createObservability: Migration = {
  name: '20261123091000_create_observability',
  async up(db) {
    await db.schema.createTable('observability_webhook', (table) => {
      table.integer('id').primary(); // always 1: there is one collector
      table.text('url').notNullable();
      table.text('secret').nullable();
      table.boolean('enabled').notNullable();
      table.jsonb('headers').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await db.schema.createTable('observability_forwarder', (table) => {
      table.integer('id').primary(); // always 1
      // { <stream>: <event-log cursor> }: the last entry of each stream taken off the log.
      table.jsonb('cursors').notNullable();
      // When forwarding was (re)enabled: a stream without a cursor is read from this time on, so a
      // first enable forwards what happens from now, not the log's history.
      table.timestamp('started_at', { useTz: true }).nullable();
      table.text('leased_by').nullable();
      table.timestamp('lease_expires_at', { useTz: true }).nullable();
      table.bigInteger('forwarded_total').notNullable().defaultTo(0);
      table.bigInteger('dropped_total').notNullable().defaultTo(0);
      table.timestamp('last_forward_at', { useTz: true }).nullable();
      table.text('last_error').nullable();
      table.timestamp('last_error_at', { useTz: true }).nullable();
      table.timestamp('last_snapshot_at', { useTz: true }).nullable();
      // Events the forwarding replica holds read ahead (queued or in flight), as of its last write.
      table.integer('queue_depth').notNullable().defaultTo(0);
      table.timestamp('updated_at', { useTz: true }).notNullable();
    });
    await db.schema.createTable('observability_dlq', (table) => {
      table.bigIncrements('id').primary();
      table.text('batch_id').notNullable().unique();
      table.jsonb('events').notNullable();
      table.integer('event_count').notNullable();
      table.integer('attempts').notNullable();
      table.text('last_error').nullable();
      table.integer('last_status_code').nullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.timestamp('failed_at', { useTz: true }).notNullable();
    });
  },
  async down(db) {
    await db.schema.dropTable('observability_dlq');
    await db.schema.dropTable('observability_forwarder');
    await db.schema.dropTable('observability_webhook');
  },
};
