import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ProblemError } from '@switchyard/shared';
import {
  appendVary,
  COMPRESSION_THRESHOLD,
  compressOnce,
  type Encoding,
  isCompressible,
} from './compression.ts';
import { cacheControlOf, contentTypeOf } from './content-types.ts';

/** One form of a file as it goes on the wire: its bytes in one coding and the validator for them. */
export interface Representation {
  body: Buffer;
  encoding: Encoding;
  /** Strong, from the content: the same bytes always carry the same tag, across restarts. */
  etag: string;
}

/**
 * One file of the build output. Its bytes are read on first use and kept, and so is each
 * compressed form once a client has asked for it: the build does not change while the server
 * runs (a deploy restarts it), so nothing is read, hashed or compressed twice.
 */
export class BuildFile {
  readonly contentType: string;
  readonly lastModified: string;
  /** Last-Modified as a time: whole seconds, as the header carries it. */
  readonly lastModifiedMs: number;
  /** Worth a compressed form: a text format of at least the compression threshold. */
  readonly compressible: boolean;
  private readonly forms = new Map<Encoding, Representation | Promise<Representation>>();

  constructor(
    readonly filePath: string,
    readonly sitePath: string,
    size: number,
    mtime: Date,
  ) {
    this.contentType = contentTypeOf(filePath);
    this.lastModified = mtime.toUTCString();
    this.lastModifiedMs = Math.floor(mtime.getTime() / 1000) * 1000;
    this.compressible = size >= COMPRESSION_THRESHOLD && isCompressible(this.contentType);
  }

  /**
   * The file in the coding the client prefers (identity when it is not worth compressing).
   * Synchronous once that form has been made, a promise the first time.
   */
  representation(preferred: Encoding): Representation | Promise<Representation> {
    const encoding = this.compressible ? preferred : 'identity';
    const known = this.forms.get(encoding);
    if (known) return known;
    const making = this.make(encoding).then(
      (made) => {
        this.forms.set(encoding, made);
        return made;
      },
      (error: unknown) => {
        // Not remembered: a failed read (the file vanished, too many open files) is tried afresh.
        this.forms.delete(encoding);
        throw error;
      },
    );
    this.forms.set(encoding, making);
    return making;
  }

  private async make(encoding: Encoding): Promise<Representation> {
    if (encoding === 'identity') {
      let body: Buffer;
      try {
        body = await readFile(this.filePath);
      } catch {
        throw new ProblemError(
          'upstream_unavailable',
          `The generated file ${this.sitePath.slice(0, 200)} could not be read on this server.`,
          { resolution: 'Retry shortly; if it persists, the site build is incomplete and must be rebuilt.' },
        );
      }
      return { body, encoding, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
    }
    const identity = await this.representation('identity');
    const body = await compressOnce(identity.body, encoding);
    return { body, encoding, etag: `${identity.etag.slice(0, -1)}-${encoding}"` };
  }
}

/** What a request path resolves to in the build output. */
export type StaticTarget =
  | { kind: 'file'; file: BuildFile }
  /** A page: its HTML, and the markdown variant when the build produced one. */
  | { kind: 'page'; html: BuildFile; markdown: BuildFile | undefined }
  /** The path with a trailing slash names a page; the canonical URL has none. */
  | { kind: 'redirect'; location: string }
  | { kind: 'none' };

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
      segment = encoded.includes('%') ? decodeURIComponent(encoded) : encoded;
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..') return undefined;
    if (/[/\\\0]/.test(segment)) return undefined;
    segments.push(segment);
  }
  return segments;
}

/** The build output, listed once; files are looked up in memory, never on disk per request. */
export interface StaticSite {
  /** Maps a request path onto the build output. */
  resolve(urlPath: string, search: string): StaticTarget;
  /** A file by its path below the build output (`404.html`, `docs/x.md`). */
  file(sitePath: string): BuildFile | undefined;
  /** How many files the build output holds. */
  readonly size: number;
}

function listFiles(dir: string, prefix: string, into: Map<string, BuildFile>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const filePath = join(dir, entry.name);
    const sitePath = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      listFiles(filePath, sitePath, into);
      continue;
    }
    try {
      // stat follows links, so a linked file is served like any other.
      const stats = statSync(filePath);
      if (stats.isFile())
        into.set(sitePath, new BuildFile(filePath, `/${sitePath}`, stats.size, stats.mtime));
      else if (stats.isDirectory()) listFiles(filePath, sitePath, into);
    } catch {
      // A dangling link is no file.
    }
  }
}

/**
 * Lists the build output (`dist/client`) once. The build is immutable while the server runs, so
 * a request costs a map lookup instead of the stats and opens it used to cost, and each file's
 * bytes, hash and compressed forms are made once (see BuildFile).
 */
export function createStaticSite(clientDir: string): StaticSite {
  const files = new Map<string, BuildFile>();
  listFiles(clientDir, '', files);
  // What a path resolves to never changes while the server runs; requests repeat the same few
  // hundred paths, so the answer is remembered (the memo starts over when full, so arbitrary
  // paths cannot grow it). Redirects depend on the query and are not remembered.
  let memo = new Map<string, StaticTarget>();
  const MEMO_LIMIT = 4096;

  function resolve(urlPath: string, search: string): StaticTarget {
    const known = memo.get(urlPath);
    if (known) return known;
    const target = resolveOnce(urlPath, search);
    if (target.kind !== 'redirect') {
      if (memo.size >= MEMO_LIMIT) memo = new Map();
      memo.set(urlPath, target);
    }
    return target;
  }

  function resolveOnce(urlPath: string, search: string): StaticTarget {
    if (urlPath.length > 1 && urlPath.endsWith('/')) {
      const trimmed = urlPath.replace(/\/+$/, '');
      const target = trimmed === '' ? { kind: 'none' as const } : resolveOnce(trimmed, search);
      // Astro is configured with trailingSlash 'never': send clients to the one canonical URL,
      // or straight on to where that URL leads (`/docs/` to the home page, in one hop).
      if (target.kind === 'redirect') return target;
      return target.kind === 'page'
        ? { kind: 'redirect', location: `${trimmed}${search}` }
        : { kind: 'none' };
    }
    const segments = safeSegments(urlPath);
    if (!segments) return { kind: 'none' };
    if (segments.length === 0) {
      const html = files.get('index.html');
      return html ? { kind: 'page', html, markdown: files.get('index.md') } : { kind: 'none' };
    }
    const base = segments.join('/');
    const file = files.get(base);
    if (file) {
      // index.html files are reached through their directory URL, never by name.
      if (segments.at(-1) === 'index.html' && segments.length > 1) return { kind: 'none' };
      return { kind: 'file', file };
    }
    const html = files.get(`${base}/index.html`);
    if (html) return { kind: 'page', html, markdown: files.get(`${base}.md`) };
    // Every page lives under /docs/, so people (and Mintlify or Starlight habits) try /docs itself:
    // it leads to the home page, which lists every page by category.
    if (base === 'docs') return { kind: 'redirect', location: `/${search}` };
    return { kind: 'none' };
  }

  return {
    resolve,
    file: (sitePath) => files.get(sitePath),
    get size() {
      return files.size;
    },
  };
}

/** Weak comparison (RFC 9110 §8.8.3.2), which If-None-Match uses: `W/` is ignored on both sides. */
function notModified(req: IncomingMessage, etag: string, lastModifiedMs: number): boolean {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
    return ifNoneMatch
      .split(',')
      .map((tag) => tag.trim())
      .some((tag) => tag === '*' || tag === opaque || tag === `W/${opaque}`);
  }
  const ifModifiedSince = req.headers['if-modified-since'];
  if (ifModifiedSince) {
    const since = Date.parse(ifModifiedSince);
    return Number.isFinite(since) && lastModifiedMs <= since;
  }
  return false;
}

/**
 * Sends one form of a build file with its type, length, coding, cache policy and validators;
 * answers 304 to a matching conditional request. `status` lets the 404 page go out with 404
 * (uncached, without validators). `headers` (name/value pairs) go along; when nothing was set on
 * the response before, all of them are written by one `writeHead`.
 */
export function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: BuildFile,
  form: Representation,
  options: { urlPath: string; status: number; varyAccept: boolean; headers: string[] },
): void {
  const { headers, status } = options;
  if (options.varyAccept || file.compressible) {
    const vary = options.varyAccept
      ? file.compressible
        ? 'Accept, Accept-Encoding'
        : 'Accept'
      : 'Accept-Encoding';
    if (res.hasHeader('Vary')) appendVary(res, vary);
    else headers.push('Vary', vary);
  }
  if (status === 200) {
    headers.push(
      'Cache-Control',
      cacheControlOf(options.urlPath),
      'ETag',
      form.etag,
      'Last-Modified',
      file.lastModified,
    );
    if (notModified(req, form.etag, file.lastModifiedMs)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
  } else {
    headers.push('Cache-Control', 'no-store');
  }
  headers.push('Content-Type', file.contentType);
  if (form.encoding !== 'identity') headers.push('Content-Encoding', form.encoding);
  headers.push('Content-Length', String(form.body.length));
  res.writeHead(status, headers);
  // Node sends no body for HEAD but keeps the length, as RFC 9110 §9.3.2 asks.
  res.end(form.body);
}
