import type { Database } from '@switchyard/shared/db';
import type { ApiHandler } from '../api/api-context.ts';
import type { AstroRenderer } from '../http/astro-renderer.ts';
import { createPublishHandler } from './publish-handler.ts';
import { createSharePages, type SharePages } from './share-pages.ts';
import { createShareService } from './share-service.ts';
import { createShareStore } from './share-store.ts';
import type { WriteBudget } from './write-budget.ts';

/**
 * Run shares: publishing a run bundle (`POST /api/v1/shares`) and its permalink pages
 * (`/s/{id}`, `/share/{id}`). The rest of the server reaches the feature only through this module;
 * the Astro build only through `run-share-view.ts`, the view its page renders.
 */
export interface SharesFeature {
  /** The createRunShare operation. */
  publish: ApiHandler;
  pages: SharePages;
}

export function createSharesFeature(deps: {
  /** The migrated database; undefined when shares are switched off (both halves answer 503). */
  db: Database | undefined;
  /** Public base URL of the site, without a trailing slash. */
  site: string;
  /** Astro's server build; undefined when it is missing (HTML permalinks answer 502). */
  renderer: AstroRenderer | undefined;
  /** Body limit of a publish (SHARES_MAX_BYTES). */
  maxBytes: number;
  writeBudget: WriteBudget;
  trustedProxyHops: number;
  now?: () => number;
}): SharesFeature {
  const service = deps.db
    ? createShareService({
        store: createShareStore(deps.db),
        budget: deps.writeBudget,
        ...(deps.now ? { now: deps.now } : {}),
      })
    : undefined;
  return {
    publish: createPublishHandler({
      service,
      maxBytes: deps.maxBytes,
      trustedProxyHops: deps.trustedProxyHops,
    }),
    pages: createSharePages({ service, renderer: deps.renderer, site: deps.site }),
  };
}

export { docsMigrations } from './migrations/index.ts';
export type { WriteBudget } from './write-budget.ts';
