import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Fixture builds run the real `astro build`; give them room on a busy two-core machine.
    hookTimeout: 180_000,
    globalSetup: ['test/global-setup.ts'],
    // Worker threads rather than forked processes: 88 s of wall time against 96 s, and 82 s of CPU
    // against 93 s, side by side (apps/control-plane/vitest.config.ts says why).
    pool: 'threads',
    // Two files at a time (Vitest's default on two cores is one): the whole suite in 40 to 54 s
    // against 58 to 63 s on both databases (CONTRIBUTING, "How long the tests take").
    maxWorkers: 2,
    // Files share their worker's modules rather than loading the server, Astro's build and the
    // shared packages again each (31 s of imports in a PGlite run): 0.85x the CPU (177 to 151 s)
    // and 86 s of wall time against 100 s, back to back.
    isolate: false,
  },
});
