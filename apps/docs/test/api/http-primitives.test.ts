import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { negotiate } from '../../server/http/accept.ts';
import { clientAddress } from '../../server/http/client-address.ts';
import { appendVary, chooseEncoding, isCompressible } from '../../server/http/compression.ts';
import { createRateLimiter } from '../../server/http/rate-limiter.ts';
import { originForm } from '../../server/http/request-target.ts';
import { createStaticSite, safeSegments } from '../../server/http/static-files.ts';

describe('Accept negotiation (negotiator)', () => {
  const offers = ['text/html', 'text/markdown'] as const;

  it.each<[string | undefined, string | undefined]>([
    [undefined, 'text/html'],
    ['', 'text/html'],
    ['*/*', 'text/html'],
    ['text/markdown', 'text/markdown'],
    ['text/markdown; charset=utf-8', 'text/markdown'],
    ['text/markdown; charset=UTF-8', 'text/markdown'],
    ['text/*;q=0, text/html', 'text/html'],
    ['text/markdown;q=0.3, text/*;q=0.4', 'text/html'],
    ['text/markdown, */*', 'text/markdown'],
    ['text/markdown, text/html', 'text/markdown'],
    ['text/html, text/markdown', 'text/html'],
    ['TEXT/MARKDOWN', 'text/markdown'],
    ['text/html;q=0.5, bad, */*;q=0.4', 'text/html'],
    [';;; ,,, nonsense', 'text/html'],
    ['application/json', undefined],
    ['*/*;q=0', undefined],
    ['text/markdown; charset=iso-8859-1', undefined],
    ['text/html;q=0, text/markdown;q=0', undefined],
  ])('Accept %j picks %j', (header, expected) => {
    expect(negotiate(header, offers)).toBe(expected);
  });
});

describe('Accept-Encoding negotiation (negotiator)', () => {
  it.each<[string | undefined, string]>([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['*', 'br'],
    ['identity', 'identity'],
    ['deflate', 'identity'],
    ['gzip;q=0, br;q=0', 'identity'],
    ['*;q=0', 'identity'],
    ['GZIP', 'gzip'],
  ])('Accept-Encoding %j gets %j', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });

  it('compresses text formats only', () => {
    for (const type of [
      'text/html; charset=utf-8',
      'text/markdown; charset=utf-8',
      'application/json; charset=utf-8',
      'application/problem+json; charset=utf-8',
      'application/xml; charset=utf-8',
      'text/javascript; charset=utf-8',
      'image/svg+xml',
    ]) {
      expect(isCompressible(type), type).toBe(true);
    }
    for (const type of ['image/png', 'font/woff2', 'application/octet-stream', 'application/wasm']) {
      expect(isCompressible(type), type).toBe(false);
    }
  });

  it('adds Accept-Encoding to Vary once, after the members already there', () => {
    const headers = new Map<string, string>();
    const res = {
      getHeader: (name: string) => headers.get(name),
      setHeader: (name: string, value: string) => headers.set(name, value),
    } as unknown as Parameters<typeof appendVary>[0];
    appendVary(res, 'Accept-Encoding');
    expect(headers.get('Vary')).toBe('Accept-Encoding');
    headers.set('Vary', 'Accept');
    appendVary(res, 'Accept-Encoding');
    appendVary(res, 'accept-encoding');
    expect(headers.get('Vary')).toBe('Accept, Accept-Encoding');
  });
});

describe('rate limiter', () => {
  it('allows limit requests per fixed window and reports the seconds left', async () => {
    let now = 0;
    const limiter = createRateLimiter({ budget: 'api', limit: 2, windowSeconds: 10, now: () => now });
    expect(await limiter.peek('a')).toMatchObject({ remaining: 2, resetSeconds: 10 });
    expect(await limiter.take('a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 10 });
    now = 2_500;
    expect(await limiter.take('a')).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 8 });
    expect(await limiter.take('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 8 });
    expect(await limiter.take('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 8 });
    // A peek reports the spent budget but refuses nothing (assets do not spend it).
    expect(await limiter.peek('a')).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 8 });
    expect(limiter.lastKnown('a')).toMatchObject({ remaining: 0, resetSeconds: 8 });
    expect(await limiter.take('b')).toMatchObject({ allowed: true, remaining: 1 });
    now = 10_000;
    expect(await limiter.take('a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 10 });
  });
});

describe('client address', () => {
  const req = (remote: string, forwarded?: string) =>
    ({
      socket: { remoteAddress: remote },
      headers: forwarded ? { 'x-forwarded-for': forwarded } : {},
    }) as unknown as IncomingMessage;

  it('uses the peer unless proxies are trusted, then the address the nearest trusted proxy appended', () => {
    expect(clientAddress(req('::ffff:127.0.0.2', '1.2.3.4'), 0)).toBe('127.0.0.2');
    expect(clientAddress(req('10.0.0.1', '6.6.6.6, 1.2.3.4'), 1)).toBe('1.2.3.4');
    expect(clientAddress(req('10.0.0.1', '6.6.6.6, 1.2.3.4, 10.0.0.9'), 2)).toBe('1.2.3.4');
    expect(clientAddress(req('10.0.0.1', 'not an address'), 1)).toBe('10.0.0.1');
    expect(clientAddress(req('10.0.0.1'), 1)).toBe('10.0.0.1');
  });
});

describe('static path resolution', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-static-'));
  const write = (relative: string, text = relative) => {
    mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    writeFileSync(path.join(dir, relative), text);
  };
  write('index.html');
  write('index.md');
  write('docs/a/index.html');
  write('docs/a.md');
  write('docs/b c/index.html');
  write('llms.txt');
  symlinkSync(path.join(dir, 'llms.txt'), path.join(dir, 'linked.txt'));
  symlinkSync(path.join(dir, 'missing.txt'), path.join(dir, 'dangling.txt'));
  const site = createStaticSite(dir);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses dot segments, encoded separators, NUL and empty segments', () => {
    for (const bad of ['/../x', '/a/%2e%2e/x', '/a%2fb', '/a%5cb', '/a%00', '/a//b', 'relative', '/%zz']) {
      expect(safeSegments(bad), bad).toBeUndefined();
    }
    expect(safeSegments('/docs/a%20b')).toEqual(['docs', 'a b']);
  });

  it('lists the build once and resolves pages, files and trailing slashes from memory', () => {
    expect(site.size).toBe(7);
    expect(site.resolve('/', '')).toMatchObject({ kind: 'page', html: { sitePath: '/index.html' } });
    expect(site.resolve('/docs/a', '')).toMatchObject({
      kind: 'page',
      html: { sitePath: '/docs/a/index.html' },
      markdown: { sitePath: '/docs/a.md' },
    });
    expect(site.resolve('/docs/b%20c', '')).toMatchObject({ kind: 'page', markdown: undefined });
    expect(site.resolve('/docs/a/', '?x=1')).toEqual({ kind: 'redirect', location: '/docs/a?x=1' });
    expect(site.resolve('/llms.txt', '')).toMatchObject({ kind: 'file', file: { sitePath: '/llms.txt' } });
    expect(site.resolve('/linked.txt', '')).toMatchObject({ kind: 'file' });
    for (const none of [
      '/dangling.txt',
      '/docs/a/index.html',
      '/docs/nope',
      '/llms.txt/',
      '/docs/../llms.txt',
    ]) {
      expect(site.resolve(none, '').kind, none).toBe('none');
    }
  });

  it('finds nothing when the build output does not exist', () => {
    const missing = createStaticSite('/nonexistent-dir');
    expect(missing.size).toBe(0);
    expect(missing.resolve('/docs/x', '').kind).toBe('none');
  });

  it('reads a file once and keeps each coding it was asked for', async () => {
    const file = site.file('llms.txt')!;
    const first = await file.representation('identity');
    expect(first.body.toString()).toBe('llms.txt');
    expect(first.etag).toMatch(/^"[\w-]{27}"$/);
    // Below the compression threshold every coding is the identity form, made once.
    expect(file.representation('br')).toBe(first);
  });
});

describe('request target forms', () => {
  it.each<[string, string | undefined]>([
    ['/docs/a?q=1', '/docs/a?q=1'],
    ['http://x/docs/a?q=1', '/docs/a?q=1'],
    ['HTTPS://docs.example.com:8443/api/v1/search?q=x', '/api/v1/search?q=x'],
    ['http://x', '/'],
    ['http://x?q=1', '/?q=1'],
    ['http://x/a/../b', '/a/../b'],
    ['http://user@x/a', '/a'],
    ['*', undefined],
    ['docs.example.com:443', undefined],
    ['ftp://x/a', undefined],
    ['http:///a', undefined],
    ['a/b', undefined],
  ])('%s → %s', (target, expected) => {
    expect(originForm(target)).toBe(expected);
  });
});
