/**
 * Sharing a workflow run: its run bundle (the DAG with input, output and error previews) and
 * publishing it to the docs site's permalinks, for the dashboard and the CLI.
 */
export { createDocsSiteClient, type DocsSiteClient, type PublishedRun } from './docs-site-client.ts';
export { sharesOpenApi } from './openapi.ts';
export { sharesRouter } from './routes.ts';
export type { RunBundle, RunBundleNode } from './run-bundle.ts';
export { createShareService, type ShareService } from './service.ts';
export { type ShareSettings, shareSettings } from './settings.ts';
