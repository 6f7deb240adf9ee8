/**
 * Lets callers wait until a pool of workers has nothing queued and nothing running (a stop that
 * waits for attempts in flight, a test's runOnce). `isIdle` reads the pool's state; the pool calls
 * `check()` whenever work ends, which releases the waiters once it is idle.
 */
export function createIdleSignal(isIdle: () => boolean) {
  const waiters = new Set<() => void>();
  return {
    /** Resolves at once when idle, else at the first check() that finds the pool idle. */
    wait(): Promise<void> {
      if (isIdle()) return Promise.resolve();
      return new Promise((done) => waiters.add(done));
    },
    check(): void {
      if (!isIdle()) return;
      const released = [...waiters];
      waiters.clear();
      for (const done of released) done();
    },
  };
}
