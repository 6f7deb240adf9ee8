import { describe, expect, it } from 'vitest';
import { createAnswerCache } from '../src/platform/answer-cache.ts';

/** The answer cache on its own: TTL, byte and entry bounds, the generation rule, shared computations. */

function cacheAt(start = Date.parse('2026-03-01T00:00:00.000Z')) {
  const clock = { now: start };
  const options = {
    ttlMs: 1000,
    now: () => clock.now,
    sizeOf: (value: string) => Buffer.byteLength(value),
  };
  return { clock, options };
}

describe('answer cache', () => {
  it('serves an entry until it is exactly the TTL old', () => {
    const { clock, options } = cacheAt();
    const cache = createAnswerCache<string>(options);
    cache.set('k', 'v', cache.generation());
    clock.now += 999;
    expect(cache.get('k')).toBe('v');
    clock.now += 1;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0, oldestAgeMs: null });
  });

  it('stores nothing with a TTL of 0', () => {
    const { options } = cacheAt();
    const cache = createAnswerCache<string>({ ...options, ttlMs: 0 });
    cache.set('k', 'v', cache.generation());
    expect(cache.get('k')).toBeUndefined();
  });

  it('reports entries, their bytes (keys included) and the age of the oldest', () => {
    const { clock, options } = cacheAt();
    const cache = createAnswerCache<string>(options);
    cache.set('a', 'xxxx', cache.generation());
    clock.now += 300;
    cache.set('bb', 'yy', cache.generation());
    clock.now += 200;
    expect(cache.stats()).toEqual({ entries: 2, bytes: 1 + 4 + 2 + 2, oldestAgeMs: 500 });
    clock.now += 500;
    // The first is now the TTL old and gone; the second is 700 ms old.
    expect(cache.stats()).toEqual({ entries: 1, bytes: 4, oldestAgeMs: 700 });
    clock.now += 5000;
    // Long expired entries, never read again, are dropped and stop counting too.
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0, oldestAgeMs: null });
  });

  it('evicts the oldest stored entries first to stay within the bytes, reads not counting as use', () => {
    const { options } = cacheAt();
    const cache = createAnswerCache<string>({ ...options, maxBytes: 30 });
    const generation = cache.generation();
    cache.set('a', 'x'.repeat(9), generation); // 10 bytes
    cache.set('b', 'x'.repeat(9), generation);
    cache.set('c', 'x'.repeat(9), generation);
    expect(cache.get('a')).toBeDefined();
    cache.set('d', 'x'.repeat(9), generation);
    expect(cache.get('a')).toBeUndefined();
    expect(['b', 'c', 'd'].map((key) => cache.get(key) !== undefined)).toEqual([true, true, true]);
    expect(cache.stats().bytes).toBe(30);
  });

  it('bounds the number of entries', () => {
    const { options } = cacheAt();
    const cache = createAnswerCache<string>({ ...options, maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) cache.set(key, 'v', cache.generation());
    expect(cache.get('a')).toBeUndefined();
    expect(cache.stats().entries).toBe(2);
  });

  it('does not cache an entry over the entry bound, and drops the older value of its key', () => {
    const { options } = cacheAt();
    const cache = createAnswerCache<string>({ ...options, maxEntryBytes: 10 });
    cache.set('k', 'small', cache.generation());
    cache.set('k', 'x'.repeat(10), cache.generation());
    expect(cache.get('k')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('never stores a value read before an invalidation', () => {
    const { options } = cacheAt();
    const cache = createAnswerCache<string>(options);
    const before = cache.generation();
    cache.invalidate();
    cache.set('k', 'stale', before);
    expect(cache.get('k')).toBeUndefined();
  });

  it('shares one computation between concurrent callers of a key', async () => {
    const { options } = cacheAt();
    const cache = createAnswerCache<string>(options);
    let runs = 0;
    const compute = async () => {
      runs += 1;
      await new Promise((done) => setTimeout(done, 10));
      return 'value';
    };
    const [first, second] = await Promise.all([cache.remember('k', compute), cache.remember('k', compute)]);
    expect(runs).toBe(1);
    expect([first.value, second.value]).toEqual(['value', 'value']);
    expect(await cache.remember('k', compute)).toEqual({ value: 'value', cached: true });
  });
});
