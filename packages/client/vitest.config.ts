import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Migrates one embedded control-plane database per run; test servers start on copies of it.
    globalSetup: ['test/global-setup.ts'],
  },
});
