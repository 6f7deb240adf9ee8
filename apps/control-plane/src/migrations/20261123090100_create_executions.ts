import type { Migration } from '@switchyard/shared/db';

/**
 * Executions: one row per call of an agent function. The row is also the queue item of the
 * async lane (status `queued`, claimed with FOR UPDATE SKIP LOCKED), so accepting a call and
 * enqueuing it are one write and nothing accepted lives only in memory.
 */
export const createExecutions: Migration = {
  name: '20261123090100_create_executions',
  async up(db) {
    await db.schema.createTable('executions', (table) => {
      table.text('execution_id').primary();
      table.text('run_id').notNullable();
      table.text('workflow_id').notNullable();
      table.text('parent_execution_id').nullable();
      table.text('session_id').nullable();
      table.text('actor_id').nullable();
      // X-Agent-Node-ID: the node whose function made this call, when an agent made it.
      table.text('caller_node_id').nullable();
      table.text('target').notNullable();
      table.text('node_id').notNullable();
      table.text('function_name').notNullable();
      table.text('function_type').notNullable(); // reasoner | skill
      table.text('lane').notNullable(); // sync | async
      table.text('status').notNullable();
      table.jsonb('input').notNullable();
      table.jsonb('result').nullable();
      table.text('error').nullable();
      table.jsonb('error_details').nullable();
      table.integer('progress').nullable();
      // The instance version chosen by traffic weight, and where it listened when called.
      table.text('routed_version').nullable();
      table.text('agent_base_url').nullable();
      // { url, secret?, headers } when a valid webhook was registered with the call.
      table.jsonb('webhook').nullable();
      table.boolean('webhook_registered').notNullable().defaultTo(false);
      table.text('webhook_error').nullable();
      // Executions on the longest parent chain up to and including this one (a root is 1).
      table.integer('depth').notNullable().defaultTo(1);
      // Queue bookkeeping: not dispatched before `available_at`; `dispatched_by` is the replica
      // that forwarded it, `accepted_at` when the agent took it (answered 202 or 200).
      table.timestamp('available_at', { useTz: true }).notNullable();
      table.text('dispatched_by').nullable();
      table.integer('dispatch_count').notNullable().defaultTo(0);
      table.timestamp('accepted_at', { useTz: true }).nullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.timestamp('started_at', { useTz: true }).nullable();
      table.timestamp('completed_at', { useTz: true }).nullable();
      table.double('duration_ms').nullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
      table.index(['workflow_id'], 'executions_workflow_idx');
      table.index(['created_at', 'execution_id'], 'executions_created_idx');
      table.index(['target', 'created_at'], 'executions_target_idx');
      table.index(['status', 'created_at'], 'executions_status_idx');
    });
    // The queue: only queued rows, in the order they may be dispatched.
    await db.raw(
      `create index executions_queue_idx on executions (available_at, created_at) where status = 'queued'`,
    );
    // What the reaper and the shutdown drain look at: executions an agent may be working on.
    await db.raw(
      `create index executions_active_idx on executions (node_id, routed_version) where status in ('running', 'waiting')`,
    );
    await db.schema.createTable('execution_logs', (table) => {
      table.bigIncrements('id').primary();
      table.text('execution_id').notNullable();
      table.jsonb('entry').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.index(['execution_id', 'id'], 'execution_logs_execution_idx');
    });
  },
  async down(db) {
    await db.schema.dropTable('execution_logs');
    await db.schema.dropTable('executions');
  },
};
