import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Migrates one template database per run; each file opens a copy of it.
    globalSetup: ['test/global-setup.ts'],
    // One file at a time, Vitest's default on two cores. Two at a time on PGlite finished sooner
    // but made timing-sensitive tests (the health monitor's claim budget) flaky under CI's load; on
    // PostgreSQL, transaction ids and snapshots are shared by every database of the server, and the
    // event log's cursors are built on them, so files in parallel would see each other's
    // transactions.
    maxWorkers: 1,
  },
});
