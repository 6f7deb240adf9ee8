import { type Clock, systemClock } from './clock.ts';

export interface WorkLoopOptions {
  /**
   * One pass of the work: look at what is due and do it. A pass that throws ends its round (a
   * wake that came meanwhile is dropped; `retryAfterMs`, the poll or the next wake cover it).
   */
  pass: () => Promise<void>;
  /** Hears of a round that threw. Not called once stop() was called: stopping is what broke it. */
  onError: (error: unknown) => void;
  /** The clock `wakeAt` times are read on; the system clock by default. */
  clock?: Clock;
  /** A pass every this many milliseconds while started: the net under a wake-up that got lost. */
  pollMs?: number;
  /** The longest a wake timer waits: a `wakeAt` further out fires this long from now instead. */
  longestSleepMs?: number;
  /** After a round that threw, a pass this many milliseconds later. */
  retryAfterMs?: number;
  /**
   * Runs after a pass that no wake interrupted, while started: the place to call `wakeAt` for the
   * work that falls due next. A wake that comes while it runs means one more pass.
   */
  afterPasses?: () => Promise<void> | void;
}

/**
 * Runs passes of some work one at a time. A wake while a pass runs asks for one more pass after it
 * (however many wakes came); passes back to back make one round, whose promise every caller that
 * asked during it shares.
 */
export interface WorkLoop {
  /** Wakes are honoured from now on, the poll ticks, and the first pass runs at once. Once only. */
  start(): void;
  /** A pass now, or one more when the running pass ends. Does nothing before start() or after stop(). */
  wake(): void;
  /**
   * A pass at `at` (on the clock), unless one is already timed no later; false when this call
   * changed nothing. Does nothing before start() or after stop().
   */
  wakeAt(at: number): boolean;
  /**
   * A pass now, started or not (tests drive unstarted loops through it), or one more after the
   * running pass; resolves when the round ends. Resolves at once after stop().
   */
  run(): Promise<void>;
  /** No pass starts from now on; resolves when the running round has ended. */
  stop(): Promise<void>;
  /** True once stop() was called: a long pass checks it to end early. */
  readonly stopped: boolean;
}

export function createWorkLoop(options: WorkLoopOptions): WorkLoop {
  const { pass, onError, pollMs, longestSleepMs, retryAfterMs, afterPasses } = options;
  const clock = options.clock ?? systemClock;
  let started = false;
  let stopped = false;
  let round: Promise<void> | undefined;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;

  async function passes(): Promise<void> {
    try {
      do {
        again = false;
        await pass();
        if (!again && !stopped && started) await afterPasses?.();
      } while (again && !stopped);
    } catch (error) {
      if (!stopped) {
        onError(error);
        if (retryAfterMs !== undefined) wakeAt(clock.now() + retryAfterMs);
      }
    } finally {
      round = undefined;
    }
  }

  function run(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (round) {
      again = true;
      return round;
    }
    // The round is known before its first pass begins, so a wake from inside that pass joins it.
    round = Promise.resolve().then(passes);
    return round;
  }

  function wake(): void {
    if (started && !stopped) void run();
  }

  function wakeAt(at: number): boolean {
    if (!started || stopped) return false;
    const target = longestSleepMs === undefined ? at : Math.min(at, clock.now() + longestSleepMs);
    if (timer && target >= timerAt) return false;
    clearTimeout(timer);
    timerAt = target;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        wake();
      },
      Math.max(0, target - clock.now()),
    );
    timer.unref();
    return true;
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      if (pollMs !== undefined) {
        poll = setInterval(wake, pollMs);
        poll.unref();
      }
      wake();
    },
    wake,
    wakeAt,
    run,
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(timer);
      timer = undefined;
      await round;
    },
    get stopped() {
      return stopped;
    },
  };
}
