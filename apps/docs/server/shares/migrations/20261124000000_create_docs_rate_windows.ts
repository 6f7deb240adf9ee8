import type { Migration } from '@switchyard/shared/db';

/**
 * The request budget's windows, one row per client address, shared by every docs replica on one
 * PostgreSQL database (server/http/shared-rate-limiter.ts; on the embedded database the table
 * stays empty and the budget is counted in memory).
 *
 * Unlogged: a window lives a minute, so losing the rows in a crash only gives clients a fresh
 * budget early, while every counted request skips the write-ahead log. The fill factor leaves
 * room on each page so that counting (which changes no indexed column) is a HOT update in place.
 * The index on window_start serves the sweep that deletes ended windows.
 */
export const createDocsRateWindows: Migration = {
  name: '20261124000000_create_docs_rate_windows',
  async up(db) {
    // Raw SQL: knex's schema builder has no UNLOGGED or storage parameters.
    await db.raw(`create unlogged table docs_rate_windows (
      client text primary key,
      window_start timestamptz not null,
      count integer not null
    ) with (fillfactor = 70)`);
    await db.raw('create index docs_rate_windows_window_start_idx on docs_rate_windows (window_start)');
  },
  async down(db) {
    await db.schema.dropTable('docs_rate_windows');
  },
};
