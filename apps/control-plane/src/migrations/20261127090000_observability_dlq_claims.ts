import type { Migration } from '@switchyard/shared/db';

/**
 * A redrive claims the parked batches it is about to send, so two redrives at once (one per
 * replica, or two requests to one) never post the same batch twice: `claimed_by` names the redrive
 * and `claim_expires_at` ends the claim of one that died before it let its batches go.
 */
export const observabilityDlqClaims: Migration = {
  name: '20261127090000_observability_dlq_claims',
  async up(db) {
    await db.schema.alterTable('observability_dlq', (table) => {
      table.text('claimed_by').nullable();
      table.timestamp('claim_expires_at', { useTz: true }).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable('observability_dlq', (table) => {
      table.dropColumn('claim_expires_at');
      table.dropColumn('claimed_by');
    });
  },
};
