/**
 * The two budgets of a client address: the site API's (`/api/`), and a far larger one for
 * everything else the site serves (pages, their markdown, llms files, manifests, permalinks,
 * files). A link check or a team behind one NAT reads pages by the hundred, which must not
 * spend what agents calling the API are promised.
 */
export type BudgetName = 'api' | 'pages';

/** The budget state a response publishes in its RateLimit-* headers. */
export interface RateLimitState {
  /** Which budget the request was counted against (named in a 429's problem document). */
  budget: BudgetName;
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the client's window ends (at least 1 while a window is open). */
  resetSeconds: number;
  windowSeconds: number;
}

/**
 * One request budget per client address. `take` and `peek` answer with a state at once when this
 * process knows it without waiting (the in-memory count, or a place the shared limiter reserved
 * ahead), and with a promise when the shared limiter (shared-rate-limiter.ts) must ask the
 * database: a request answered at once costs no promise and no extra turn of the event loop.
 */
export interface RateLimiter {
  /** Counts one request of the client and tells whether it is within the budget. */
  take(client: string): RateLimitState | Promise<RateLimitState>;
  /** The client's state without counting a request (for responses that do not spend budget). */
  peek(client: string): RateLimitState | Promise<RateLimitState>;
  /**
   * The client's state as this process last saw it, without waiting on anything: for answers
   * written straight to a socket (client errors, CONNECT), which are produced synchronously.
   */
  lastKnown(client: string): RateLimitState;
  /** Stops background work (the shared limiter's sweeps) and waits for what is under way. */
  close(): Promise<void>;
}

export interface RateLimitOptions {
  budget: BudgetName;
  limit: number;
  windowSeconds: number;
  /** Milliseconds since the epoch; tests move it instead of sleeping. */
  now?: () => number;
}

interface Window {
  startedAt: number;
  count: number;
}

/**
 * Fixed windows per client in a map: what the in-memory limiter counts in, and what the shared
 * limiter keeps as its view of the rows it last read. Expired windows are swept at most once per
 * window length, so the map stays bounded by the number of clients seen in the last window.
 */
export class FixedWindows {
  private readonly windows = new Map<string, Window>();
  private readonly windowMs: number;
  private lastSweep: number | undefined;

  constructor(
    readonly budget: BudgetName,
    readonly limit: number,
    readonly windowSeconds: number,
  ) {
    this.windowMs = windowSeconds * 1000;
  }

  /** Counts one request at `at`; over the limit the answer is a refusal. */
  take(client: string, at: number): RateLimitState {
    this.sweep(at);
    let window = this.current(client, at);
    if (!window) {
      window = { startedAt: at, count: 0 };
      this.windows.set(client, window);
    }
    // Refused requests are counted once past the limit (limit + 1 means "spent"), as in the
    // shared store, so both read their state the same way.
    if (window.count <= this.limit) window.count += 1;
    return this.state(window.startedAt, window.count, at);
  }

  /**
   * The client's state at `at` without counting. Always `allowed`: what does not spend the
   * budget (fingerprinted assets) is not refused either, even once it is spent.
   */
  peek(client: string, at: number): RateLimitState {
    const window = this.current(client, at);
    const state = window ? this.state(window.startedAt, window.count, at) : this.state(at, 0, at);
    return { ...state, allowed: true };
  }

  /** Replaces the client's window with one read elsewhere (the shared limiter's rows). */
  record(client: string, startedAt: number, count: number, at: number): void {
    this.sweep(at);
    this.windows.set(client, { startedAt, count });
  }

  /**
   * The state of a window that started at `startedAt` and holds `count` requests, the request
   * that was just counted included. `count` may exceed the limit (the shared store counts refused
   * requests too, up to limit + 1): over the limit means refused. The reset is kept within one
   * window length, in case another replica's clock, which opened the window, runs ahead of ours.
   */
  state(startedAt: number, count: number, at: number): RateLimitState {
    const resetMs = startedAt + this.windowMs - at;
    return {
      budget: this.budget,
      allowed: count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: Math.min(this.windowSeconds, Math.max(1, Math.ceil(resetMs / 1000))),
      windowSeconds: this.windowSeconds,
    };
  }

  private current(client: string, at: number): Window | undefined {
    const window = this.windows.get(client);
    if (window && at - window.startedAt < this.windowMs) return window;
    return undefined;
  }

  private sweep(at: number): void {
    if (this.lastSweep === undefined) this.lastSweep = at;
    if (at - this.lastSweep < this.windowMs) return;
    this.lastSweep = at;
    for (const [client, window] of this.windows) {
      if (at - window.startedAt >= this.windowMs) this.windows.delete(client);
    }
  }
}

/**
 * A fixed window per client address, counted in this process: the first request opens a window
 * of `windowSeconds`, at most `limit` requests are allowed in it. Fixed windows keep the headers
 * honest and the hot path to one map lookup. Exact for one process (the embedded database allows
 * no other); replicas on PostgreSQL share their count through createSharedRateLimiter instead.
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const now = options.now ?? Date.now;
  const windows = new FixedWindows(options.budget, options.limit, options.windowSeconds);
  return {
    take: (client) => windows.take(client, now()),
    peek: (client) => windows.peek(client, now()),
    lastKnown: (client) => windows.peek(client, now()),
    close: async () => {},
  };
}
