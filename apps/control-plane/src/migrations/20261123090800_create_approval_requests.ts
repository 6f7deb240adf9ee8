import type { Migration } from '@switchyard/shared/db';

/**
 * Approval requests: an execution paused for a reviewer's decision. The row is also the outbox of
 * the decision's delivery to the agent's `callback_url` (claimed with FOR UPDATE SKIP LOCKED, retried
 * until the agent takes it), so a decision once recorded is never lost with a replica.
 */
export const createApprovalRequests: Migration = {
  name: '20261123090800_create_approval_requests',
  async up(db) {
    await db.schema.createTable('approval_requests', (table) => {
      table.text('approval_request_id').primary();
      table.text('execution_id').notNullable();
      table.text('node_id').notNullable();
      // The execution's target, copied so lists of approvals name what asks without a join.
      table.text('target').notNullable();
      table.text('approval_request_url').nullable();
      // Where the decision is POSTed (the TypeScript SDK's `<agent>/webhooks/approval`); null when
      // the agent polls approval-status instead.
      table.text('callback_url').nullable();
      // pending | approved | rejected | request_changes | expired | cancelled (the execution ended
      // otherwise before a decision)
      table.text('status').notNullable();
      table.text('feedback').nullable();
      table.timestamp('requested_at', { useTz: true }).notNullable();
      table.timestamp('expires_at', { useTz: true }).notNullable();
      table.timestamp('decided_at', { useTz: true }).nullable();
      // Delivery of the decision to callback_url: pending | delivering | delivered | abandoned
      // (null while undecided or without a callback_url).
      table.text('callback_status').nullable();
      table.integer('callback_attempts').notNullable().defaultTo(0);
      table.timestamp('callback_next_attempt_at', { useTz: true }).nullable();
      table.text('callback_leased_by').nullable();
      table.timestamp('callback_lease_expires_at', { useTz: true }).nullable();
      table.integer('callback_last_status_code').nullable();
      table.text('callback_last_error').nullable();
      table.timestamp('callback_delivered_at', { useTz: true }).nullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
      table.index(['execution_id', 'requested_at'], 'approval_requests_execution_idx');
      table.index(['status', 'requested_at'], 'approval_requests_status_idx');
    });
    // One open request per execution: a second request while one is pending is a conflict.
    await db.raw(
      `create unique index approval_requests_one_pending_idx on approval_requests (execution_id) where status = 'pending'`,
    );
    await db.raw(
      `create index approval_requests_expiry_idx on approval_requests (expires_at) where status = 'pending'`,
    );
    await db.raw(
      `create index approval_requests_callback_due_idx on approval_requests (callback_next_attempt_at) where callback_status in ('pending', 'delivering')`,
    );
    // What a waiting execution waits for (spec: `waiting_for`), shown in its status record.
    await db.schema.alterTable('executions', (table) => {
      table.jsonb('waiting_for').nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable('executions', (table) => {
      table.dropColumn('waiting_for');
    });
    await db.schema.dropTable('approval_requests');
  },
};
