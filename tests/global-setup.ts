import { controlPlaneMigrations } from '@switchyard/control-plane/migrations';
import { docsMigrations } from '@switchyard/docs/server/shares/migrations/index.ts';
import {
  createMigratedDataDir,
  createTestDatabaseTemplate,
  type TestDatabaseTemplate,
} from '@switchyard/shared/db';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * A migrated PGlite control-plane data directory that server processes on the embedded
     * database start from a copy of (see control-plane-process.ts). Made on PostgreSQL runs too:
     * some tests start a server on PGlite whatever the run's database.
     */
    controlPlaneDataTemplate: string;
    /** The same for the docs site's server processes (data-dir.ts). */
    docsDataTemplate: string;
    /** The migrated docs database that in-process docs servers start as a copy of (docs-server.ts). */
    docsTemplate: TestDatabaseTemplate;
  }
}

/**
 * A server started on an empty database spends most of its start creating it (on PGlite, an
 * initdb) and migrating it; seconds each, dozens of times per run. The run migrates one of each
 * kind instead, and servers start on copies.
 */
export default async function setup(project: TestProject) {
  const docs = await createTestDatabaseTemplate([docsMigrations]);
  project.provide('docsTemplate', docs.template);
  const controlPlaneData = await createMigratedDataDir([controlPlaneMigrations]);
  project.provide('controlPlaneDataTemplate', controlPlaneData.dataDir);
  const docsData = await createMigratedDataDir([docsMigrations]);
  project.provide('docsDataTemplate', docsData.dataDir);
  return async () => {
    await Promise.all([controlPlaneData.dispose(), docsData.dispose(), docs.dispose()]);
  };
}
