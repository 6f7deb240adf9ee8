import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Migrates one template database per run; each file opens a copy of it.
    globalSetup: ['test/global-setup.ts'],
    // Each file in a fresh worker thread rather than a forked process. On embedded PGlite, ten files
    // side by side took 62 s of wall time and 59 s of CPU in threads against 75 s and 79 s forked;
    // on PostgreSQL the whole suite took the same either way (4 min 10 s and 4 min 7 s), so the
    // gain is in opening PGlite. Sharing the module cache between files (`isolate: false`) cut more,
    // but every file's embedded database then stayed in memory: 16 GB and growing half-way through.
    pool: 'threads',
    // Two files at a time: one file's waits on its database and servers leave the core to the
    // other (CONTRIBUTING, "How long the tests take", for the figures).
    maxWorkers: 2,
  },
});
