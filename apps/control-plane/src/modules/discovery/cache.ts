/** Default bound on the bytes of the answers the discovery cache keeps (keys included). */
export const DISCOVERY_CACHE_MAX_BYTES = 32 * 1024 * 1024;
/**
 * An answer larger than this is never cached: one huge query must not push out dozens of
 * ordinary ones, and it is recomputed from the cached fleet snapshot anyway.
 */
export const DISCOVERY_CACHE_MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** Bound on distinct queries kept, whatever their size: each entry costs bookkeeping too. */
export const DISCOVERY_CACHE_MAX_ENTRIES = 1000;

/** What the health report says about a cache. */
export interface DiscoveryCacheStats {
  entries: number;
  /** Bytes of the live entries (their values as sized by `sizeOf`, plus their keys). */
  bytes: number;
  oldestAgeMs: number | null;
}

/**
 * The discovery answer cache: rendered answers keyed by the normalized query, each kept for the
 * TTL. `invalidate()` drops everything and bumps a generation, so an answer computed from data
 * read before an invalidation is never stored after it (it would be stale for a whole TTL).
 */
export interface DiscoveryCache<V> {
  get(key: string): V | undefined;
  /** Stores `value` unless the cache was invalidated since `generation` was read, or it is too large. */
  set(key: string, value: V, generation: number): void;
  generation(): number;
  invalidate(): void;
  /** Live entries, their bytes and the age of the oldest, for the health report. */
  stats(): DiscoveryCacheStats;
}

export interface DiscoveryCacheOptions<V> {
  ttlMs: number;
  now: () => number;
  /** Bound on distinct queries kept, so hostile query variety cannot grow memory without end. */
  maxEntries?: number;
  /** The size of a value in bytes; without it values count as 0 bytes and only keys are sized. */
  sizeOf?: (value: V) => number;
  /** Bound on the bytes kept: the oldest entries are evicted first to make room. */
  maxBytes?: number;
  /** A value larger than this (with its key) is not cached at all. */
  maxEntryBytes?: number;
}

export function createDiscoveryCache<V>(options: DiscoveryCacheOptions<V>): DiscoveryCache<V> {
  const maxEntries = options.maxEntries ?? DISCOVERY_CACHE_MAX_ENTRIES;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxEntryBytes = Math.min(options.maxEntryBytes ?? Number.POSITIVE_INFINITY, maxBytes);
  const sizeOf = options.sizeOf ?? (() => 0);
  // Map keeps insertion order, and set() re-inserts, so the first key is always the oldest entry.
  const entries = new Map<string, { value: V; storedAt: number; bytes: number }>();
  let bytes = 0;
  let generation = 0;
  const expired = (storedAt: number) => options.now() - storedAt >= options.ttlMs;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.bytes;
    entries.delete(key);
  };

  return {
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
      // Keys are JSON of the whole query (up to 50 patterns of 200 characters): they count too.
      const size = sizeOf(value) + Buffer.byteLength(key);
      if (size > maxEntryBytes) return;
      while (entries.size > 0 && (entries.size >= maxEntries || bytes + size > maxBytes)) {
        remove(entries.keys().next().value as string);
      }
      entries.set(key, { value, storedAt: options.now(), bytes: size });
      bytes += size;
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
}
