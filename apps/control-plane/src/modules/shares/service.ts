import type { Clock } from '../../platform/clock.ts';
import type { ExecutionQueries } from '../executions/index.ts';
import type { DocsSiteClient, PublishedRun } from './docs-site-client.ts';
import { buildRunBundle, type RunBundle } from './run-bundle.ts';

export interface ShareOptions {
  redact: boolean;
  title?: string;
}

export interface ShareService {
  /** The workflow's run bundle, as it would be published. */
  bundle(workflowId: string, options: ShareOptions): Promise<RunBundle>;
  /** Builds the bundle and publishes it to the docs site: its permalink. */
  share(workflowId: string, options: ShareOptions): Promise<PublishedRun>;
}

export function createShareService(deps: {
  queries: Pick<ExecutionQueries, 'dag' | 'payloads'>;
  docsSite: DocsSiteClient;
  clock: Clock;
}): ShareService {
  const bundle = (workflowId: string, options: ShareOptions) =>
    buildRunBundle(deps.queries, workflowId, { ...options, now: new Date(deps.clock.now()) });
  return {
    bundle,
    async share(workflowId, options) {
      return deps.docsSite.publish(await bundle(workflowId, options));
    },
  };
}
