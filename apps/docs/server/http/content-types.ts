import { extname } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
  // Pagefind's index files are compressed binary fragments its browser script fetches.
  '.pf_meta': 'application/octet-stream',
  '.pf_index': 'application/octet-stream',
  '.pf_fragment': 'application/octet-stream',
  '.pagefind': 'application/octet-stream',
};

/** The Content-Type for a file served from the build output. */
export function contentTypeOf(filePath: string): string {
  return TYPES[extname(filePath).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Cache policy by location: Astro fingerprints everything under /_astro/, so those never change;
 * Pagefind's fragments are content-hashed too but its entry files are not, so they get an hour;
 * pages, markdown and the generated manifests change with every deploy and must revalidate.
 */
export function cacheControlOf(urlPath: string): string {
  if (urlPath.startsWith('/_astro/')) return 'public, max-age=31536000, immutable';
  if (urlPath.startsWith('/pagefind/')) return 'public, max-age=300';
  return 'public, max-age=0, must-revalidate';
}
