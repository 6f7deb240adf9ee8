import { openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { inject } from 'vitest';

/**
 * A test database of its own with the control plane's schema: a copy of the template the run's
 * global setup migrated. Callers still run `migrateLatest`, which then finds nothing to apply.
 */
export function openMigratedTestDatabase(): Promise<TestDatabase> {
  return openTestDatabase({ template: inject('controlPlaneTemplate') });
}
