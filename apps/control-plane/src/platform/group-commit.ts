import DataLoader from 'dataloader';

export interface GroupCommitOptions<Item> {
  /** The most items one write takes (100). */
  maxBatch?: number;
  /** How many writes may be on their way at once (2); items that come meanwhile wait and go together. */
  maxInFlight?: number;
  /**
   * Items with the same key are never written together: the later one goes in a write of its own
   * after the first has ended (two ends of one execution must each see what the other did).
   */
  keyOf?: (item: Item) => string;
  /**
   * An item's size (say, the characters of its JSON values): a write takes items up to
   * `maxBatchSize` in all, and a larger item goes alone, so a burst of large payloads never makes
   * one statement of hundreds of megabytes.
   */
  sizeOf?: (item: Item) => number;
  /** The most one write takes by `sizeOf` (4 MiB). */
  maxBatchSize?: number;
}

/**
 * Group commit for a write that many requests make at once, such as ending an execution: a write
 * starts at once when fewer than `maxInFlight` are on their way, and the items that arrive while
 * they are gather into the next one, a single statement for all of them. A caller at a quiet
 * moment waits for nothing more than its own statement; under load there are fewer statements,
 * round trips and commits per item, which is where the lanes spent their time (bench/control-plane,
 * "Group commit"). Each caller's promise settles only once its item's write has committed, so
 * nothing is answered before it is durable.
 *
 * `write` takes the items and hands back one result per item, in their order. When a write of
 * several fails, each of its items is written again on its own, so one item the database refuses
 * fails only its own caller.
 *
 * DataLoader does the gathering (with its cache off: every item is written); what is ours is when
 * a batch is sent.
 */
export function createGroupCommit<Item, Result>(
  write: (items: readonly Item[]) => Promise<readonly Result[]>,
  options: GroupCommitOptions<Item> = {},
): (item: Item) => Promise<Result> {
  const maxInFlight = options.maxInFlight ?? 2;
  const keyOf = options.keyOf;
  const sizeOf = options.sizeOf;
  const maxBatchSize = options.maxBatchSize ?? 4 * 1024 * 1024;
  let inFlight = 0;
  const waiting: Array<() => void> = [];

  function release(): void {
    const next = waiting.shift();
    if (next) setImmediate(next);
    else inFlight -= 1;
  }

  async function writeDistinct(items: readonly Item[]): Promise<Array<Result | Error>> {
    if (!keyOf) return writeSized(items);
    const results = new Array<Result | Error>(items.length);
    let rest = items.map((item, index) => ({ item, index }));
    while (rest.length > 0) {
      const seen = new Set<string>();
      const now: typeof rest = [];
      const later: typeof rest = [];
      for (const entry of rest) {
        const key = keyOf(entry.item);
        (seen.has(key) ? later : now).push(entry);
        seen.add(key);
      }
      const written = await writeSized(now.map((entry) => entry.item));
      now.forEach((entry, i) => {
        results[entry.index] = written[i] as Result | Error;
      });
      rest = later;
    }
    return results;
  }

  /** writeOrEach over runs of the items no larger than maxBatchSize, one after the other. */
  async function writeSized(items: readonly Item[]): Promise<Array<Result | Error>> {
    if (!sizeOf) return writeOrEach(items);
    const results: Array<Result | Error> = [];
    let run: Item[] = [];
    let size = 0;
    for (const item of items) {
      const itemSize = sizeOf(item);
      if (run.length > 0 && size + itemSize > maxBatchSize) {
        results.push(...(await writeOrEach(run)));
        run = [];
        size = 0;
      }
      run.push(item);
      size += itemSize;
    }
    if (run.length > 0) results.push(...(await writeOrEach(run)));
    return results;
  }

  async function writeOrEach(items: readonly Item[]): Promise<Array<Result | Error>> {
    try {
      return [...(await write(items))];
    } catch (error) {
      if (items.length === 1) return [asError(error)];
      return Promise.all(
        items.map((item) =>
          write([item]).then(
            ([result]) => result as Result,
            (failure: unknown) => asError(failure),
          ),
        ),
      );
    }
  }

  const loader = new DataLoader<Item, Result>(
    async (items) => {
      try {
        return await writeDistinct(items);
      } finally {
        release();
      }
    },
    {
      cache: false,
      maxBatchSize: options.maxBatch ?? 100,
      // Called once per batch, when its first item comes. A free slot sends it once the callbacks
      // of this turn of the event loop have had their say (setImmediate: after the I/O that is
      // ready now, so requests that arrived together go together); otherwise it waits for a slot.
      batchScheduleFn(send) {
        if (inFlight < maxInFlight) {
          inFlight += 1;
          setImmediate(send);
        } else {
          waiting.push(send);
        }
      },
    },
  );
  return (item) => loader.load(item);
}

/** DataLoader rejects an item whose result is an Error; anything thrown is made one. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
