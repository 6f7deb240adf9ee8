/** Thrown by a check to stop polling at once: waiting longer cannot help. */
export class GiveUp extends Error {}

/**
 * Polls `check` until it returns a value, or fails after `timeoutMs` naming what was awaited and
 * what `context()` says about the last state (a deadline, never a timed assertion). A check that
 * throws GiveUp ends the wait at once.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  context: () => string = () => '',
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      if (error instanceof GiveUp) throw new Error(`${what}: ${error.message}\n${context()}`);
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms (${String(last ?? '')})\n${context()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}
