import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two files at a time. Each file starts real servers and a real browser, which leave a core
    // idle while they wait on each other; a second file fills those waits (CONTRIBUTING, "How long
    // the tests take", for the figures).
    fileParallelism: true,
    maxWorkers: 2,
    // Each worker loads the helpers' modules (Playwright, the docs server, the shared packages) once
    // rather than once per file: the files are black-box and keep their state in their own
    // variables. A whole PGlite run took 0.90x the CPU and 0.91x the wall time of isolated files,
    // its imports 22 s against 102 s (CONTRIBUTING, "How long the tests take").
    isolate: false,
    // Migrates one embedded control-plane database per run; server processes start on copies of it.
    globalSetup: ['global-setup.ts'],
  },
});
