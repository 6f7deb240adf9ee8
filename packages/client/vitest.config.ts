import { defineConfig } from 'vitest/config';

export default defineConfig({
  // One file at a time: on PostgreSQL (DATABASE_URL) every file's server migrates the same database.
  test: { testTimeout: 30_000, hookTimeout: 60_000, fileParallelism: false },
});
