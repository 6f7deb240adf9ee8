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
    // Migrates one embedded control-plane database per run; server processes start on copies of it.
    globalSetup: ['global-setup.ts'],
  },
});
