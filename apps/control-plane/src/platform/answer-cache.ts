import { LRUCache } from 'lru-cache';

/** Default bound on distinct keys kept, whatever their size: each entry costs bookkeeping too. */
export const ANSWER_CACHE_MAX_ENTRIES = 1000;

/** What the health report says about a cache. */
export interface AnswerCacheStats {
  entries: number;
  /** Bytes of the live entries (their values as sized by `sizeOf`, plus their keys). */
  bytes: number;
  oldestAgeMs: number | null;
}

/**
 * A cache of answers computed from data other replicas can change (the fleet of registered
 * nodes): each value is kept for the TTL, and `invalidate()` (called for every change event on
 * the bus, which reaches every replica) drops everything and bumps a generation, so a value
 * computed from data read before an invalidation is never stored after it (it would be stale for
 * a whole TTL). The TTL is the backstop for changes no event announces.
 */
export interface AnswerCache<V> {
  get(key: string): V | undefined;
  /** Stores `value` unless the cache was invalidated since `generation` was read, or it is too large. */
  set(key: string, value: V, generation: number): void;
  /**
   * The cached value of `key`, or `compute()`'s, stored under the generation read before it ran.
   * Concurrent callers asking for the same key in the same generation share one computation: a
   * burst of requests after an invalidation reads the database once, not once each.
   */
  remember(key: string, compute: () => Promise<V>): Promise<{ value: V; cached: boolean }>;
  generation(): number;
  invalidate(): void;
  /** Live entries, their bytes and the age of the oldest, for the health report. */
  stats(): AnswerCacheStats;
}

export interface AnswerCacheOptions<V> {
  ttlMs: number;
  now: () => number;
  /** Bound on distinct keys kept, so hostile query variety cannot grow memory without end. */
  maxEntries?: number;
  /** The size of a value in bytes; without it values count as 0 bytes and only keys are sized. */
  sizeOf?: (value: V) => number;
  /** Bound on the bytes kept: the oldest entries are evicted first to make room. */
  maxBytes?: number;
  /** A value larger than this (with its key) is not cached at all. */
  maxEntryBytes?: number;
}

/**
 * lru-cache keeps the entries (TTL, entry and byte bounds, eviction); this layer adds the
 * generation rule (a value read before an invalidation is never stored after it) and one shared
 * computation per key and generation, which lru-cache does not offer in this form.
 */
export function createAnswerCache<V>(options: AnswerCacheOptions<V>): AnswerCache<V> {
  const maxEntries = options.maxEntries ?? ANSWER_CACHE_MAX_ENTRIES;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxEntryBytes = Math.min(options.maxEntryBytes ?? Number.POSITIVE_INFINITY, maxBytes);
  const sizeOf = options.sizeOf ?? (() => 0);
  const ttlMs = options.ttlMs;
  const bound = (bytes: number) => (Number.isFinite(bytes) ? bytes : Number.MAX_SAFE_INTEGER);
  const entries = new LRUCache<string, { value: V }>({
    max: maxEntries,
    // Sized by value and key: keys are the whole normalized query (discovery's can be 50 patterns
    // of 200 characters). lru-cache needs a positive size, which any non-empty key gives.
    sizeCalculation: (entry, key) => Math.max(1, sizeOf(entry.value) + Buffer.byteLength(key)),
    maxSize: bound(maxBytes),
    // A value larger than this (with its key) is not cached at all, and drops the key's old value.
    maxEntrySize: bound(maxEntryBytes),
    // The TTL (a disabled cache stores nothing, see set) on the caller's clock, read on every check
    // so a test's clock takes effect at once.
    ...(ttlMs > 0 ? { ttl: Math.ceil(ttlMs) } : {}),
    perf: { now: options.now },
    ttlResolution: 0,
  });
  const inFlight = new Map<string, { generation: number; promise: Promise<V> }>();
  let generation = 0;
  /**
   * Whether the entry of `key` is still fresh. lru-cache serves an entry through the TTL's last
   * millisecond (stale once older than the TTL); here an entry exactly TTL old is stale already.
   */
  const fresh = (key: string) => entries.getRemainingTTL(key) > 0;

  const cache: AnswerCache<V> = {
    get(key) {
      if (!fresh(key)) {
        entries.delete(key);
        return undefined;
      }
      // peek, not get: a read does not make an entry younger, so the oldest stored is evicted first.
      return entries.peek(key)?.value;
    },
    set(key, value, readGeneration) {
      if (ttlMs <= 0 || readGeneration !== generation) return;
      entries.set(key, { value });
    },
    async remember(key, compute) {
      const hit = cache.get(key);
      if (hit !== undefined) return { value: hit, cached: true };
      const readGeneration = generation;
      const shared = inFlight.get(key);
      if (shared && shared.generation === readGeneration) {
        return { value: await shared.promise, cached: false };
      }
      const promise = compute();
      inFlight.set(key, { generation: readGeneration, promise });
      try {
        const value = await promise;
        cache.set(key, value, readGeneration);
        return { value, cached: false };
      } finally {
        if (inFlight.get(key)?.promise === promise) inFlight.delete(key);
      }
    },
    generation: () => generation,
    invalidate() {
      generation += 1;
      entries.clear();
    },
    stats() {
      let oldestAgeMs: number | null = null;
      // Entries older than the TTL (which keys() skips) go first, then those exactly its age.
      entries.purgeStale();
      for (const key of [...entries.keys()]) {
        const remaining = entries.getRemainingTTL(key);
        if (remaining <= 0) entries.delete(key);
        else oldestAgeMs = Math.max(oldestAgeMs ?? 0, Math.ceil(ttlMs) - remaining);
      }
      return { entries: entries.size, bytes: entries.calculatedSize, oldestAgeMs };
    },
  };
  return cache;
}
