import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { negotiate } from '../../server/http/accept.ts';
import { clientAddress } from '../../server/http/client-address.ts';
import { createRateLimiter } from '../../server/http/rate-limiter.ts';
import { originForm } from '../../server/http/request-target.ts';
import { resolveStatic, safeSegments } from '../../server/http/static-files.ts';

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

describe('rate limiter', () => {
  it('allows limit requests per fixed window and reports the seconds left', () => {
    let now = 0;
    const limiter = createRateLimiter({ limit: 2, windowSeconds: 10, now: () => now });
    expect(limiter.peek('a')).toMatchObject({ remaining: 2, resetSeconds: 10 });
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 10 });
    now = 2_500;
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 8 });
    expect(limiter.take('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 8 });
    expect(limiter.take('b')).toMatchObject({ allowed: true, remaining: 1 });
    now = 10_000;
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 10 });
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
  it('refuses dot segments, encoded separators, NUL and empty segments', () => {
    for (const bad of ['/../x', '/a/%2e%2e/x', '/a%2fb', '/a%5cb', '/a%00', '/a//b', 'relative', '/%zz']) {
      expect(safeSegments(bad), bad).toBeUndefined();
    }
    expect(safeSegments('/docs/a%20b')).toEqual(['docs', 'a b']);
  });

  it('finds nothing outside the client directory', () => {
    expect(resolveStatic('/nonexistent-dir', '/docs/x', '').kind).toBe('none');
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
