import type { MigrationSet } from '@switchyard/shared/db';
import { createRunShares } from './20261122000000_create_run_shares.ts';
import { createRunShareWrites } from './20261123000000_create_run_share_writes.ts';
import { createDocsRateWindows } from './20261124000000_create_docs_rate_windows.ts';
import { docsRateWindowsPerBudget } from './20261126000000_docs_rate_windows_per_budget.ts';

/**
 * The docs site's schema history, oldest first, recorded in its own table so the docs site and the
 * control plane can share one database. Add a file per change; never edit a landed one.
 */
export const docsMigrations: MigrationSet = {
  tableName: 'docs_migrations',
  migrations: [createRunShares, createRunShareWrites, createDocsRateWindows, docsRateWindowsPerBudget],
};
