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

/*
 * Hand-written rather than lru-cache: what matters here is the generation rule (a value read
 * before an invalidation is never stored after it) and sharing one computation per generation,
 * which a general-purpose cache does not offer; the eviction itself is a few lines over a Map.
 */
export function createAnswerCache<V>(options: AnswerCacheOptions<V>): AnswerCache<V> {
  const maxEntries = options.maxEntries ?? ANSWER_CACHE_MAX_ENTRIES;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxEntryBytes = Math.min(options.maxEntryBytes ?? Number.POSITIVE_INFINITY, maxBytes);
  const sizeOf = options.sizeOf ?? (() => 0);
  // Map keeps insertion order, and set() re-inserts, so the first key is always the oldest entry.
  const entries = new Map<string, { value: V; storedAt: number; bytes: number }>();
  const inFlight = new Map<string, { generation: number; promise: Promise<V> }>();
  let bytes = 0;
  let generation = 0;
  const expired = (storedAt: number) => options.now() - storedAt >= options.ttlMs;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.bytes;
    entries.delete(key);
  };

  const cache: AnswerCache<V> = {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (expired(entry.storedAt)) {
        remove(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value, readGeneration) {
      if (options.ttlMs <= 0 || readGeneration !== generation) return;
      remove(key);
      // Keys are the whole normalized query (discovery's can be 50 patterns of 200 characters).
      const size = sizeOf(value) + Buffer.byteLength(key);
      if (size > maxEntryBytes) return;
      while (entries.size > 0 && (entries.size >= maxEntries || bytes + size > maxBytes)) {
        remove(entries.keys().next().value as string);
      }
      entries.set(key, { value, storedAt: options.now(), bytes: size });
      bytes += size;
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
      bytes = 0;
    },
    stats() {
      let oldest: number | null = null;
      for (const [key, entry] of entries) {
        if (expired(entry.storedAt)) remove(key);
        else if (oldest === null || entry.storedAt < oldest) oldest = entry.storedAt;
      }
      return { entries: entries.size, bytes, oldestAgeMs: oldest === null ? null : options.now() - oldest };
    },
  };
  return cache;
}
