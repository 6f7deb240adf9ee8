import { createReadStream, type Stats, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { cacheControlOf, contentTypeOf } from './content-types.ts';

/** A file of the build output that answers one request. */
export interface StaticFile {
  filePath: string;
  stats: Stats;
}

/** What a request path resolves to in the build output. */
export type StaticTarget =
  | { kind: 'file'; file: StaticFile }
  /** A page: its HTML, and the markdown variant when the build produced one. */
  | { kind: 'page'; html: StaticFile; markdown: StaticFile | undefined }
  /** The path with a trailing slash names a page; the canonical URL has none. */
  | { kind: 'redirect'; location: string }
  | { kind: 'none' };

function fileAt(filePath: string): StaticFile | undefined {
  try {
    const stats = statSync(filePath);
    return stats.isFile() ? { filePath, stats } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Splits a URL path into safe segments, or undefined for anything that could step outside the
 * build output or is not a plain path (dot segments, encoded separators, NUL, empty segments).
 */
export function safeSegments(urlPath: string): string[] | undefined {
  if (!urlPath.startsWith('/')) return undefined;
  const raw = urlPath.slice(1);
  if (raw === '') return [];
  const segments: string[] = [];
  for (const encoded of raw.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(encoded);
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..') return undefined;
    if (/[/\\\0]/.test(segment)) return undefined;
    segments.push(segment);
  }
  return segments;
}

/** Maps a request path onto the build output (`dist/client`). */
export function resolveStatic(clientDir: string, urlPath: string, search: string): StaticTarget {
  if (urlPath.length > 1 && urlPath.endsWith('/')) {
    const trimmed = urlPath.replace(/\/+$/, '');
    const segments = safeSegments(trimmed);
    if (!segments || segments.length === 0) return { kind: 'none' };
    const target = resolveStatic(clientDir, trimmed, search);
    // Astro is configured with trailingSlash 'never': send clients to the one canonical URL.
    return target.kind === 'page' ? { kind: 'redirect', location: `${trimmed}${search}` } : { kind: 'none' };
  }
  const segments = safeSegments(urlPath);
  if (!segments) return { kind: 'none' };
  const base = join(clientDir, ...segments);
  if (segments.length === 0) {
    const html = fileAt(join(clientDir, 'index.html'));
    return html ? { kind: 'page', html, markdown: fileAt(join(clientDir, 'index.md')) } : { kind: 'none' };
  }
  const file = fileAt(base);
  if (file) {
    // index.html files are reached through their directory URL, never by name.
    if (segments.at(-1) === 'index.html' && segments.length > 1) return { kind: 'none' };
    return { kind: 'file', file };
  }
  const html = fileAt(join(base, 'index.html'));
  if (html) return { kind: 'page', html, markdown: fileAt(`${base}.md`) };
  return { kind: 'none' };
}

function etagOf(stats: Stats): string {
  return `W/"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
}

function notModified(req: IncomingMessage, etag: string, stats: Stats): boolean {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch
      .split(',')
      .map((tag) => tag.trim())
      .some((tag) => tag === '*' || tag === etag || `W/${tag}` === etag);
  }
  const ifModifiedSince = req.headers['if-modified-since'];
  if (ifModifiedSince) {
    const since = Date.parse(ifModifiedSince);
    return Number.isFinite(since) && Math.floor(stats.mtimeMs / 1000) * 1000 <= since;
  }
  return false;
}

/**
 * Streams one file with its type, length, cache policy and validators; answers 304 to a
 * matching conditional request. `status` lets the 404 page be sent with status 404.
 */
export function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: StaticFile,
  urlPath: string,
  status = 200,
): void {
  const etag = etagOf(file.stats);
  res.setHeader('Content-Type', contentTypeOf(file.filePath));
  if (status === 200) {
    res.setHeader('Cache-Control', cacheControlOf(urlPath));
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', file.stats.mtime.toUTCString());
    if (notModified(req, etag, file.stats)) {
      res.statusCode = 304;
      res.removeHeader('Content-Type');
      res.end();
      return;
    }
  } else {
    res.setHeader('Cache-Control', 'no-store');
  }
  res.statusCode = status;
  res.setHeader('Content-Length', file.stats.size);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file.filePath);
  stream.on('error', () => {
    // The file vanished between stat and read (a redeploy): the headers are out, so end the
    // connection rather than send a truncated body that claims to be complete.
    res.destroy();
  });
  stream.pipe(res);
}
