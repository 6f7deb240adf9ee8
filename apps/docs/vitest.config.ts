import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Fixture builds run the real `astro build`; give them room on a busy two-core machine.
    hookTimeout: 180_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
