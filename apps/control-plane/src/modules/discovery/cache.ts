/**
 * The discovery answer cache: rendered answers keyed by the normalized query, each kept for the
 * TTL. `invalidate()` drops everything and bumps a generation, so an answer computed from data
 * read before an invalidation is never stored after it (it would be stale for a whole TTL).
 */
export interface DiscoveryCache<V> {
  get(key: string): V | undefined;
  /** Stores `value` unless the cache was invalidated since `generation` was read. */
  set(key: string, value: V, generation: number): void;
  generation(): number;
  invalidate(): void;
  /** Live entries and the age of the oldest, for the health report. */
  stats(): { entries: number; oldestAgeMs: number | null };
}

export function createDiscoveryCache<V>(options: {
  ttlMs: number;
  now: () => number;
  /** Bound on distinct queries kept, so hostile query variety cannot grow memory without end. */
  maxEntries?: number;
}): DiscoveryCache<V> {
  const maxEntries = options.maxEntries ?? 1000;
  const entries = new Map<string, { value: V; storedAt: number }>();
  let generation = 0;
  const expired = (storedAt: number) => options.now() - storedAt >= options.ttlMs;

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (expired(entry.storedAt)) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value, readGeneration) {
      if (options.ttlMs <= 0 || readGeneration !== generation) return;
      entries.delete(key);
      // Map keeps insertion order, so the first key is the oldest entry.
      while (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, storedAt: options.now() });
    },
    generation: () => generation,
    invalidate() {
      generation += 1;
      entries.clear();
    },
    stats() {
      let oldest: number | null = null;
      for (const [key, entry] of entries) {
        if (expired(entry.storedAt)) entries.delete(key);
        else if (oldest === null || entry.storedAt < oldest) oldest = entry.storedAt;
      }
      return { entries: entries.size, oldestAgeMs: oldest === null ? null : options.now() - oldest };
    },
  };
}
