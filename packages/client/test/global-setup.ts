import { controlPlaneMigrations } from '@switchyard/control-plane/migrations';
import { createMigratedDataDir } from '@switchyard/shared/db';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * On the embedded database, a migrated control-plane data directory that each test's server
     * starts on a copy of (helpers/control-plane.ts); empty when DATABASE_URL is set.
     */
    controlPlaneDataTemplate: string;
  }
}

/** One initdb and migration per run instead of one per test file (seconds of CPU each). */
export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide('controlPlaneDataTemplate', '');
    return;
  }
  const { dataDir, dispose } = await createMigratedDataDir([controlPlaneMigrations]);
  project.provide('controlPlaneDataTemplate', dataDir);
  return dispose;
}
