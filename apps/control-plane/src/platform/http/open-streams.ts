/**
 * The long-lived responses (Server-Sent Events) open right now. They never finish on their own,
 * so a graceful shutdown ends them here instead of waiting out its grace period for them.
 */
export interface OpenStreams {
  /** Registers a stream's `end`; the returned function forgets it once the stream has closed. */
  add(end: () => void): () => void;
  /** Ends every open stream (each `end` is called once); streams opened later are ended at once. */
  endAll(): void;
  readonly size: number;
}

export function createOpenStreams(): OpenStreams {
  const ends = new Set<() => void>();
  let ending = false;
  return {
    add(end) {
      if (ending) {
        end();
        return () => {};
      }
      ends.add(end);
      return () => {
        ends.delete(end);
      };
    },
    endAll() {
      ending = true;
      for (const end of [...ends]) end();
      ends.clear();
    },
    get size() {
      return ends.size;
    },
  };
}
