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
    // gain is in opening PGlite.
    pool: 'threads',
    // Files share their worker's modules rather than loading the whole app again each. Measured
    // back to back: 0.69x to 0.78x the CPU on PGlite and 0.56x on PostgreSQL, 0.8x the wall time.
    // The cost is memory: in use on the machine, it grows through a PGlite run to 7.3 to 8.8 GB
    // against a 4.0 GB peak isolated; suites run one at a time (`turbo --concurrency=1`), so that
    // is the whole of it (CONTRIBUTING, "Modules loaded once per worker").
    isolate: false,
    // Two files at a time: one file's waits on its database and servers leave the core to the
    // other (CONTRIBUTING, "How long the tests take", for the figures).
    maxWorkers: 2,
  },
});
