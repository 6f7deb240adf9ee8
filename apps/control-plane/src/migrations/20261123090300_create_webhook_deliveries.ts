import type { Migration } from '@switchyard/shared/db';

/**
 * Webhook deliveries (an outbox): a row is written in the same transaction as the terminal
 * state of its execution, then claimed by delivery workers with FOR UPDATE SKIP LOCKED. Every
 * attempt is kept, so delivery history and the dead-letter queue are queries, not logs.
 */
export const createWebhookDeliveries: Migration = {
  name: '20261123090300_create_webhook_deliveries',
  async up(db) {
    await db.schema.createTable('webhook_deliveries', (table) => {
      table.text('delivery_id').primary();
      table.text('execution_id').notNullable();
      table.text('event').notNullable();
      table.text('url').notNullable();
      table.text('secret').nullable();
      table.jsonb('headers').notNullable();
      table.jsonb('payload').notNullable();
      // pending | delivering | delivered | dead
      table.text('status').notNullable();
      table.integer('attempts').notNullable().defaultTo(0);
      // True once an operator re-delivered it (POST .../webhook/retry): its attempts since then
      // are recorded as manual, and `attempts` counts from 0 again.
      table.boolean('manual').notNullable().defaultTo(false);
      table.timestamp('next_attempt_at', { useTz: true }).nullable();
      table.text('leased_by').nullable();
      table.timestamp('lease_expires_at', { useTz: true }).nullable();
      table.integer('last_status_code').nullable();
      table.text('last_error').nullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.timestamp('delivered_at', { useTz: true }).nullable();
      table.timestamp('dead_at', { useTz: true }).nullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
      table.index(['execution_id'], 'webhook_deliveries_execution_idx');
      table.index(['status', 'dead_at'], 'webhook_deliveries_status_idx');
    });
    await db.raw(
      `create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status in ('pending', 'delivering')`,
    );
    await db.schema.createTable('webhook_attempts', (table) => {
      table.bigIncrements('id').primary();
      table.text('delivery_id').notNullable();
      table.integer('attempt').notNullable();
      table.boolean('manual').notNullable().defaultTo(false);
      table.timestamp('started_at', { useTz: true }).notNullable();
      table.double('duration_ms').notNullable();
      table.integer('status_code').nullable();
      table.text('error').nullable();
      // At most 16 KB of the receiver's answer is kept.
      table.text('response_body').nullable();
      table.index(['delivery_id', 'attempt'], 'webhook_attempts_delivery_idx');
    });
  },
  async down(db) {
    await db.schema.dropTable('webhook_attempts');
    await db.schema.dropTable('webhook_deliveries');
  },
};
