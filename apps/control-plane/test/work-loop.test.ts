import { afterEach, describe, expect, it } from 'vitest';
import { createWorkLoop, type WorkLoop, type WorkLoopOptions } from '../src/platform/work-loop.ts';
import { manualClock } from './helpers/clock.ts';

const loops: WorkLoop[] = [];

afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
});

/**
 * A loop whose passes are counted and can be held open: while `hold` is set, each pass waits
 * until the test calls `release()`.
 */
function counted(options: Partial<WorkLoopOptions> = {}) {
  const state = {
    passes: 0,
    running: 0,
    overlapped: false,
    errors: [] as unknown[],
    hold: false,
    fail: false,
    release: () => {},
    /** Resolves when a held pass has begun. */
    begun: Promise.resolve(),
  };
  let signalBegun = () => {};
  const armBegun = () => {
    state.begun = new Promise<void>((resolve) => {
      signalBegun = resolve;
    });
  };
  armBegun();
  const loop = createWorkLoop({
    onError: (error) => state.errors.push(error),
    ...options,
    async pass() {
      state.passes += 1;
      state.running += 1;
      if (state.running > 1) state.overlapped = true;
      try {
        if (state.hold) {
          const released = new Promise<void>((resolve) => {
            state.release = resolve;
          });
          signalBegun();
          await released;
          armBegun();
        }
        if (state.fail) throw new Error('pass failed');
      } finally {
        state.running -= 1;
      }
    },
  });
  loops.push(loop);
  return { loop, state };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, failing after two seconds. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await pause(2);
  }
}

describe('work loop', () => {
  it('runs the first pass at once when started, and nothing is woken before that', async () => {
    const { loop, state } = counted();
    loop.wake();
    expect(loop.wakeAt(Date.now())).toBe(false);
    await pause(20);
    expect(state.passes).toBe(0);
    loop.start();
    await until(() => state.passes === 1);
  });

  it('turns any number of wakes during a pass into one more pass, after it', async () => {
    const { loop, state } = counted();
    state.hold = true;
    loop.start();
    await state.begun;
    for (let i = 0; i < 10; i++) loop.wake();
    state.hold = false;
    state.release();
    await until(() => state.passes === 2);
    await pause(30);
    expect(state.passes).toBe(2);
    expect(state.overlapped).toBe(false);
  });

  it('lets every caller of run() during a round wait for the pass it asked for', async () => {
    const { loop, state } = counted();
    state.hold = true;
    const first = loop.run();
    await state.begun;
    const second = loop.run();
    state.hold = false;
    state.release();
    await first;
    await second;
    expect(state.passes).toBe(2);
  });

  it('runs passes through run() before start, but wakes and timers only once started', async () => {
    const { loop, state } = counted({ pollMs: 5 });
    await loop.run();
    await loop.run();
    expect(state.passes).toBe(2);
    await pause(30);
    expect(state.passes).toBe(2);
  });

  it('stops: waits for the pass running, runs none after it even when woken meanwhile', async () => {
    const { loop, state } = counted({ pollMs: 5 });
    state.hold = true;
    loop.start();
    await state.begun;
    loop.wake();
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await pause(20);
    expect(stopped).toBe(false);
    expect(loop.stopped).toBe(true);
    state.release();
    await stopping;
    expect(state.passes).toBe(1);
    await loop.run();
    loop.wake();
    await pause(30);
    expect(state.passes).toBe(1);
  });

  it('reports a pass that threw and goes on with the next wake', async () => {
    const { loop, state } = counted();
    state.fail = true;
    loop.start();
    await until(() => state.errors.length === 1);
    expect((state.errors[0] as Error).message).toBe('pass failed');
    state.fail = false;
    loop.wake();
    await until(() => state.passes === 2);
    expect(state.errors).toHaveLength(1);
  });

  it('tries again retryAfterMs after a pass that threw', async () => {
    const { loop, state } = counted({ retryAfterMs: 20 });
    state.fail = true;
    loop.start();
    await until(() => state.errors.length === 1);
    state.fail = false;
    await until(() => state.passes === 2);
    expect(state.errors).toHaveLength(1);
  });

  it('does not report a pass that threw after stop was called', async () => {
    const { loop, state } = counted();
    state.hold = true;
    state.fail = true;
    loop.start();
    await state.begun;
    const stopping = loop.stop();
    state.release();
    await stopping;
    expect(state.passes).toBe(1);
    expect(state.errors).toHaveLength(0);
  });

  it('polls every pollMs while started', async () => {
    const { loop, state } = counted({ pollMs: 10 });
    loop.start();
    await until(() => state.passes >= 4);
    await loop.stop();
    const passes = state.passes;
    await pause(40);
    expect(state.passes).toBe(passes);
  });

  it('wakes at a time read on its clock, keeping the earliest timer', async () => {
    const clock = manualClock();
    const { loop, state } = counted({ clock });
    loop.start();
    await until(() => state.passes === 1);
    const start = clock.now();
    // Timers wait the difference between `at` and the clock's now: 10 s later is far off.
    expect(loop.wakeAt(start + 10_000)).toBe(true);
    expect(loop.wakeAt(start + 20_000)).toBe(false);
    await pause(30);
    expect(state.passes).toBe(1);
    // An earlier time replaces it, and the clock moved on makes it due in a moment.
    clock.advance(4_990);
    expect(loop.wakeAt(start + 5_000)).toBe(true);
    await until(() => state.passes === 2);
    await pause(30);
    expect(state.passes).toBe(2);
  });

  it('never sleeps longer than longestSleepMs', async () => {
    const { loop, state } = counted({ longestSleepMs: 15 });
    loop.start();
    await until(() => state.passes === 1);
    expect(loop.wakeAt(Date.now() + 3_600_000)).toBe(true);
    await until(() => state.passes === 2);
  });

  it('runs afterPasses once a pass ends unwoken, and passes again when woken during it', async () => {
    let afters = 0;
    let wakeDuringAfter = true;
    const { loop, state } = counted({
      afterPasses: async () => {
        afters += 1;
        if (wakeDuringAfter) {
          wakeDuringAfter = false;
          loop.wake();
        }
      },
    });
    state.hold = true;
    loop.start();
    await state.begun;
    loop.wake();
    state.hold = false;
    state.release();
    // Pass 1 was woken: no afterPasses. Pass 2 was not: afterPasses, which wakes. Pass 3: afterPasses.
    await until(() => afters === 2);
    expect(state.passes).toBe(3);
    await pause(20);
    expect(state.passes).toBe(3);
    expect(afters).toBe(2);
  });

  it('does not run afterPasses for a round run before start', async () => {
    let afters = 0;
    const { loop, state } = counted({
      afterPasses: () => {
        afters += 1;
      },
    });
    await loop.run();
    expect(state.passes).toBe(1);
    expect(afters).toBe(0);
  });
});
