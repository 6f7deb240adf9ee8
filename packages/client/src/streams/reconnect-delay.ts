/**
 * How long an event stream waits before it connects again. Hand-written rather than taken from a
 * retry library (exponential-backoff and the like run one operation until it succeeds, with fixed
 * options per run): a stream is never done, its backoff starts over each time a connection goes
 * live, and its base delay is the server's own `retry:` field, which can change on any connection.
 */
export interface ReconnectDelayOptions {
  /** The wait before the first reconnection, until the server suggests one with `retry:`; 1 s. */
  initialDelayMs?: number;
  /** The longest wait between attempts while the server stays unreachable; 30 s. */
  maxDelayMs?: number;
}

export interface ReconnectDelay {
  /** The server's `retry:` field: the base delay from now on. */
  setBase(ms: number): void;
  /** A connection went live: the next failure waits the base delay again. */
  reset(): void;
  /** The wait before the next attempt; each call without a reset doubles it, up to the maximum. */
  next(): number;
}

export function reconnectDelay(options: ReconnectDelayOptions = {}): ReconnectDelay {
  let base = options.initialDelayMs ?? 1_000;
  const max = options.maxDelayMs ?? 30_000;
  let failures = 0;
  return {
    setBase(ms) {
      if (Number.isFinite(ms) && ms >= 0) base = ms;
    },
    reset() {
      failures = 0;
    },
    next() {
      const ceiling = Math.min(max, base * 2 ** failures);
      failures += 1;
      // Jitter over the upper half spreads the clients a restarted server dropped all at once,
      // so they do not all come back in the same millisecond.
      return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    },
  };
}
