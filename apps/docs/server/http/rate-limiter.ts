/** The budget state a response publishes in its RateLimit-* headers. */
export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the client's window ends (at least 1 while a window is open). */
  resetSeconds: number;
  windowSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of the client and tells whether it is within the budget. */
  take(client: string): RateLimitState;
  /** The client's state without counting a request (for responses that do not spend budget). */
  peek(client: string): RateLimitState;
}

interface Window {
  startedAt: number;
  count: number;
}

/**
 * A fixed window per client address: the first request opens a window of `windowSeconds`, at most
 * `limit` requests are allowed in it. Fixed windows keep the headers honest and the hot path to
 * one map lookup; expired windows are swept at most once per window length so the map stays
 * bounded by the number of clients seen in the last window.
 */
export function createRateLimiter(options: {
  limit: number;
  windowSeconds: number;
  now?: () => number;
}): RateLimiter {
  const { limit, windowSeconds } = options;
  const windowMs = windowSeconds * 1000;
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();
  let lastSweep = now();

  function sweep(at: number): void {
    if (at - lastSweep < windowMs) return;
    lastSweep = at;
    for (const [client, window] of windows) {
      if (at - window.startedAt >= windowMs) windows.delete(client);
    }
  }

  function current(client: string, at: number): Window | undefined {
    const window = windows.get(client);
    if (window && at - window.startedAt < windowMs) return window;
    return undefined;
  }

  function state(window: Window | undefined, at: number, allowed: boolean): RateLimitState {
    const count = window?.count ?? 0;
    const resetMs = window ? window.startedAt + windowMs - at : windowMs;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
      windowSeconds,
    };
  }

  return {
    take(client) {
      const at = now();
      sweep(at);
      let window = current(client, at);
      if (!window) {
        window = { startedAt: at, count: 0 };
        windows.set(client, window);
      }
      if (window.count >= limit) return state(window, at, false);
      window.count += 1;
      return state(window, at, true);
    },
    peek(client) {
      const at = now();
      return state(current(client, at), at, true);
    },
  };
}
