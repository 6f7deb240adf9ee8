import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The docs workspace root (apps/docs), found from this file so it works from any cwd. */
export const docsRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Where the markdown corpus lives. `DOCS_CONTENT_DIR` lets tests and the benchmark build the site
 * from a fixture corpus without touching the repository's `content/`.
 */
export function contentDir(): string {
  const configured = process.env.DOCS_CONTENT_DIR;
  return configured ? path.resolve(configured) : path.resolve(docsRoot, '../../content');
}

/** The public origin every absolute URL of the site is built from, without a trailing slash. */
export function siteUrl(): string {
  return (process.env.SITE_URL ?? 'http://127.0.0.1:4321').replace(/\/+$/, '');
}
