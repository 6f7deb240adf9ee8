import { copyMigratedDataDir, openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { inject } from 'vitest';

/**
 * A test database of its own with the control plane's schema: a copy of the template the run's
 * global setup migrated. Callers still run `migrateLatest`, which then finds nothing to apply.
 */
export function openMigratedTestDatabase(): Promise<TestDatabase> {
  return openTestDatabase({ template: inject('controlPlaneTemplate') });
}

/**
 * For a server started from its settings on the embedded database: puts a copy of the run's
 * migrated data directory where SWITCHYARD_DATA_DIR=`dataDir` makes it look, unless a database is
 * there already, so it starts without an initdb and the migrations (seconds of CPU). Does nothing
 * on PostgreSQL.
 */
export async function seedDataDir(dataDir: string): Promise<void> {
  const template = inject('controlPlaneDataTemplate');
  if (template) await copyMigratedDataDir(template, dataDir, 'control-plane');
}
