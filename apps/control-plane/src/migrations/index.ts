import type { MigrationSet } from '@switchyard/shared/db';

/** The control plane's schema history, oldest first. Add a file per change; never edit a landed one. */
export const controlPlaneMigrations: MigrationSet = {
  tableName: 'control_plane_migrations',
  migrations: [],
};
