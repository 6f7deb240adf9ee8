import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Migrates one template database per run; each file opens a copy of it.
    globalSetup: ['test/global-setup.ts'],
    // One file at a time, Vitest's default on two cores. Two at a time finished sooner but made
    // tests that wait on real time flaky under CI's load (CONTRIBUTING, "How long the tests take").
    maxWorkers: 1,
  },
});
