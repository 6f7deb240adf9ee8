import type { Migration } from '@switchyard/shared/db';

/**
 * A client address has two request budgets, the API's and the pages' (server/http/rate-limiter.ts),
 * so its windows are keyed on the budget too. The rows that exist were all counted against the one
 * budget there was, which the API keeps. The sweep of ended windows runs per budget (each limiter
 * knows only its own window length), hence the budget first in its index.
 */
export const docsRateWindowsPerBudget: Migration = {
  name: '20261126000000_docs_rate_windows_per_budget',
  async up(db) {
    await db.raw(`alter table docs_rate_windows add column budget text not null default 'api'`);
    await db.raw('alter table docs_rate_windows drop constraint docs_rate_windows_pkey');
    await db.raw('alter table docs_rate_windows add primary key (budget, client)');
    await db.raw('drop index docs_rate_windows_window_start_idx');
    await db.raw(
      'create index docs_rate_windows_window_start_idx on docs_rate_windows (budget, window_start)',
    );
  },
  async down(db) {
    await db.raw(`delete from docs_rate_windows where budget <> 'api'`);
    await db.raw('drop index docs_rate_windows_window_start_idx');
    await db.raw('alter table docs_rate_windows drop constraint docs_rate_windows_pkey');
    await db.raw('alter table docs_rate_windows drop column budget');
    await db.raw('alter table docs_rate_windows add primary key (client)');
    await db.raw('create index docs_rate_windows_window_start_idx on docs_rate_windows (window_start)');
  },
};
