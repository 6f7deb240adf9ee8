import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One real browser and real servers per file; running files one at a time keeps the two shared cores calm.
    fileParallelism: false,
    // Migrates one embedded control-plane database per run; server processes start on copies of it.
    globalSetup: ['global-setup.ts'],
  },
});
