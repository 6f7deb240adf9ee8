import { copyMigratedDataDir } from '@switchyard/shared/db';
import { inject } from 'vitest';

/** An app that keeps an embedded database under SWITCHYARD_DATA_DIR, in a directory of its name. */
export type AppWithData = 'control-plane' | 'docs';

const TEMPLATES = {
  'control-plane': () => inject('controlPlaneDataTemplate'),
  docs: () => inject('docsDataTemplate'),
} satisfies Record<AppWithData, () => string>;

/**
 * Puts a copy of the run's migrated embedded database of each of `apps` (global-setup.ts) into the
 * data directory `dir`, where a server started with SWITCHYARD_DATA_DIR=dir opens it, unless one
 * is there already. Creating one instead (an initdb and the migrations) costs a server about 5 s
 * of CPU; tests of what a first start does leave the directory empty.
 */
export async function seedDataDir(dir: string, apps: AppWithData[]): Promise<void> {
  for (const app of apps) await copyMigratedDataDir(TEMPLATES[app](), dir, app);
}
