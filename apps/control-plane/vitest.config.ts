import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Migrates one template database per run; each file opens a copy of it.
    globalSetup: ['test/global-setup.ts'],
    // Vitest's default on two cores is one file at a time; most files spend much of their time
    // waiting on sockets, child processes and the database, so on PGlite (a database per file, in
    // the file's own process) two at a time finish sooner. On PostgreSQL files stay one at a time:
    // transaction ids and snapshots are shared by every database of the server, and the event log's
    // cursors are built on them, so a transaction open in one file's database changes what a
    // follower in another file's database is handed.
    maxWorkers: process.env.DATABASE_URL ? 1 : 2,
  },
});
