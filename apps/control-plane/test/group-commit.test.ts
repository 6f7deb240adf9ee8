import { describe, expect, it } from 'vitest';
import { createGroupCommit } from '../src/platform/group-commit.ts';

/** A write that records each batch it got and waits until the test lets it end. */
function heldWrites(options: { refuse?: (item: string) => boolean } = {}) {
  const batches: string[][] = [];
  const pending: Array<() => void> = [];
  let open = 0;
  let mostOpen = 0;
  const write = async (items: readonly string[]) => {
    batches.push([...items]);
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    await new Promise<void>((resolve) => pending.push(resolve));
    open -= 1;
    const refused = items.find((item) => options.refuse?.(item));
    if (refused !== undefined) throw new Error(`refused ${refused}`);
    return items.map((item) => `${item}:written`);
  };
  return {
    write,
    batches,
    mostOpen: () => mostOpen,
    /** Lets every write started so far end. */
    async endAll() {
      for (const resolve of pending.splice(0)) resolve();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('group commit', () => {
  it('writes an item at once when nothing else is on its way, alone', async () => {
    const writes = heldWrites();
    const write = createGroupCommit(writes.write);
    const result = write('a');
    await turn();
    expect(writes.batches).toEqual([['a']]);
    await writes.endAll();
    await expect(result).resolves.toBe('a:written');
  });

  it('gathers items that come while the writes in flight are busy into one write, each caller getting its own result', async () => {
    const writes = heldWrites();
    const write = createGroupCommit(writes.write, { maxInFlight: 1 });
    const first = write('a');
    await turn();
    const later = ['b', 'c', 'd'].map((item) => write(item));
    await turn();
    expect(writes.batches).toEqual([['a']]);
    await writes.endAll();
    await turn();
    expect(writes.batches).toEqual([['a'], ['b', 'c', 'd']]);
    await writes.endAll();
    await expect(first).resolves.toBe('a:written');
    await expect(Promise.all(later)).resolves.toEqual(['b:written', 'c:written', 'd:written']);
  });

  it('never has more than maxInFlight writes on their way, and keeps batches within maxBatch', async () => {
    const writes = heldWrites();
    const write = createGroupCommit(writes.write, { maxInFlight: 2, maxBatch: 3 });
    const results = Array.from({ length: 10 }, (_, i) => write(`item${i}`));
    for (let i = 0; i < 10 && writes.batches.flat().length < 10; i++) {
      await turn();
      await writes.endAll();
    }
    await writes.endAll();
    await expect(Promise.all(results)).resolves.toHaveLength(10);
    expect(writes.mostOpen()).toBeLessThanOrEqual(2);
    expect(Math.max(...writes.batches.map((batch) => batch.length))).toBeLessThanOrEqual(3);
    expect(writes.batches.flat().sort()).toEqual(Array.from({ length: 10 }, (_, i) => `item${i}`).sort());
  });

  it('fails only the caller whose item the write refuses: the others are written again, each alone', async () => {
    const writes = heldWrites({ refuse: (item) => item === 'bad' });
    const write = createGroupCommit(writes.write, { maxInFlight: 1 });
    const first = write('a');
    await turn();
    const good = write('b');
    const bad = write('bad').then(
      () => 'written',
      (error: Error) => error.message,
    );
    const alsoGood = write('c');
    for (let i = 0; i < 5; i++) {
      await writes.endAll();
      await turn();
    }
    await expect(first).resolves.toBe('a:written');
    await expect(good).resolves.toBe('b:written');
    await expect(alsoGood).resolves.toBe('c:written');
    await expect(bad).resolves.toBe('refused bad');
    expect(writes.batches).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });

  it('never writes two items with the same key together: the later one follows in a write of its own', async () => {
    const writes = heldWrites();
    const write = createGroupCommit(writes.write, {
      maxInFlight: 1,
      keyOf: (item) => item.split('#')[0] as string,
    });
    const first = write('x#0');
    await turn();
    const rest = ['a#1', 'b#1', 'a#2', 'a#3'].map((item) => write(item));
    for (let i = 0; i < 6; i++) {
      await writes.endAll();
      await turn();
    }
    await first;
    await expect(Promise.all(rest)).resolves.toEqual([
      'a#1:written',
      'b#1:written',
      'a#2:written',
      'a#3:written',
    ]);
    expect(writes.batches).toEqual([['x#0'], ['a#1', 'b#1'], ['a#2'], ['a#3']]);
  });

  it('keeps each write within maxBatchSize, and writes an item larger than that alone', async () => {
    const writes = heldWrites();
    const write = createGroupCommit(writes.write, {
      maxInFlight: 1,
      sizeOf: (item) => item.length,
      maxBatchSize: 10,
    });
    const first = write('x');
    await turn();
    const rest = ['aaaa', 'bbbb', 'cccc', 'dddddddddddddddd', 'ee'].map((item) => write(item));
    for (let i = 0; i < 6; i++) {
      await writes.endAll();
      await turn();
    }
    await first;
    await expect(Promise.all(rest)).resolves.toHaveLength(5);
    expect(writes.batches).toEqual([['x'], ['aaaa', 'bbbb'], ['cccc'], ['dddddddddddddddd'], ['ee']]);
  });
});
