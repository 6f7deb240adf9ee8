import {
  createMigratedDataDir,
  createTestDatabaseTemplate,
  type TestDatabaseTemplate,
} from '@switchyard/shared/db';
import type { TestProject } from 'vitest/node';
import { controlPlaneMigrations } from '../src/migrations/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database that test databases start as a copy of (see helpers/database.ts). */
    controlPlaneTemplate: TestDatabaseTemplate;
    /**
     * On the embedded database, a migrated data directory that servers started from their
     * settings copy (see helpers/database.ts); empty when DATABASE_URL is set.
     */
    controlPlaneDataTemplate: string;
  }
}

/**
 * Runs the control plane's migrations once per test run, on the database the run uses (PGlite, or
 * PostgreSQL when DATABASE_URL is set): opening a migrated copy costs a fraction of creating an
 * empty database and migrating it in every test file.
 */
export default async function setup(project: TestProject) {
  const { template, dispose } = await createTestDatabaseTemplate([controlPlaneMigrations]);
  project.provide('controlPlaneTemplate', template);
  const data = process.env.DATABASE_URL ? undefined : await createMigratedDataDir([controlPlaneMigrations]);
  project.provide('controlPlaneDataTemplate', data?.dataDir ?? '');
  return async () => {
    await Promise.all([dispose(), data?.dispose()]);
  };
}
