import { openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { inject } from 'vitest';

/**
 * A test database of its own with the docs site's schema: a copy of the template the run's global
 * setup migrated. The server still runs `migrateLatest` on start, which then finds nothing to apply.
 */
export function openMigratedTestDatabase(): Promise<TestDatabase> {
  return openTestDatabase({ template: inject('docsTemplate') });
}
