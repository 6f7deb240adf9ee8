import { describe, expect, it } from 'vitest';
import { type Batch, createBatcher, type Queued } from '../src/modules/observability/batcher.ts';
import type { LeaseView } from '../src/modules/observability/forwarding-lease.ts';
import type { ForwardedStream } from '../src/modules/observability/repository.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { manualClock } from './helpers/clock.ts';

const lease: LeaseView = {
  collector: undefined,
  leading: true,
  generation: 1,
  startedAt: null,
  holds: () => true,
};

function item(stream: ForwardedStream, n: number, bytes = 10): Queued {
  const id = `${stream}-${n}`;
  return {
    event: { id, stream, event: 'e', timestamp: new Date(0).toISOString(), payload: { n } },
    cursor: id,
    bytes,
    readAt: Date.now(),
  };
}

/** A batcher whose sends wait until the test ends them, one by one. */
function batcher(
  options: { batchSize?: number; batchBytes?: number; workers?: number; timeoutMs?: number } = {},
) {
  const sent: Batch[] = [];
  const finish = new Map<Batch, () => void>();
  let ended = 0;
  const created = createBatcher({
    clock: manualClock(),
    log: silentLogger(),
    settings: {
      batchSize: options.batchSize ?? 3,
      batchTimeoutMs: options.timeoutMs ?? 60_000,
      workers: options.workers ?? 2,
    },
    batchBytes: options.batchBytes ?? 1_000,
    lease,
    stopped: () => false,
    send: (batch) => {
      sent.push(batch);
      return new Promise<void>((resolve) => finish.set(batch, resolve));
    },
    onBatchEnded: () => {
      ended += 1;
    },
  });
  return { batcher: created, sent, end: (batch: Batch) => finish.get(batch)?.(), ended: () => ended };
}

describe('observability batcher', () => {
  it('sends full batches at once, holds a partial one for the batch timeout, and counts what is read ahead', async () => {
    const { batcher: b, sent } = batcher();
    for (let n = 1; n <= 4; n++) b.add(item('memory', n));
    b.drain();
    expect(sent.map((batch) => batch.events.length)).toEqual([3]);
    expect(b.queued()).toBe(1);
    expect(b.depth()).toBe(4);
    expect(b.bytesAhead()).toBe(40);
    b.setFlushing(true);
    b.drain();
    expect(sent.map((batch) => batch.events.length)).toEqual([3, 1]);
    expect(sent.map((batch) => batch.seq)).toEqual([0, 1]);
  });

  it('sends a partial batch once the batch timeout has passed', async () => {
    const { batcher: b, sent } = batcher({ timeoutMs: 20 });
    b.add(item('memory', 1));
    b.drain();
    expect(sent).toHaveLength(0);
    await expect.poll(() => sent.length).toBe(1);
  });

  it('ends a batch before the event that would pass the byte bound; a larger event goes alone', () => {
    const { batcher: b, sent } = batcher({ batchBytes: 25, batchSize: 10, workers: 5 });
    b.add(item('memory', 1, 10));
    b.add(item('memory', 2, 10));
    b.add(item('memory', 3, 10));
    b.add(item('memory', 4, 100));
    b.setFlushing(true);
    b.drain();
    expect(sent.map((batch) => batch.events.map((event) => event.id))).toEqual([
      ['memory-1', 'memory-2'],
      ['memory-3'],
      ['memory-4'],
    ]);
  });

  it('lets cursors move only past the settled batches at the front, in the order they were formed', () => {
    const { batcher: b, sent } = batcher({ batchSize: 1, workers: 3 });
    b.add(item('memory', 1));
    b.add(item('nodes', 1));
    b.add(item('memory', 2));
    b.drain();
    const [first, second, third] = sent as [Batch, Batch, Batch];
    expect(b.settle(second)).toEqual({});
    expect(b.settle(third)).toEqual({});
    expect(b.settle(first)).toEqual({ memory: 'memory-2', nodes: 'nodes-1' });
  });

  it('uses at most `workers` sends at once and goes on when one ends', async () => {
    const { batcher: b, sent, end, ended } = batcher({ batchSize: 1, workers: 2 });
    for (let n = 1; n <= 3; n++) b.add(item('memory', n));
    b.drain();
    expect(sent).toHaveLength(2);
    end(sent[0] as Batch);
    await expect.poll(() => sent.length).toBe(3);
    expect(ended()).toBe(1);
    expect(b.depth()).toBe(2);
  });

  it('forgets what is queued and unsettled when this replica steps down', async () => {
    const { batcher: b, sent, end } = batcher({ batchSize: 1, workers: 1 });
    b.add(item('memory', 1));
    b.add(item('memory', 2));
    b.drain();
    b.forget();
    expect(b.queued()).toBe(0);
    end(sent[0] as Batch);
    await b.idle();
    expect(sent).toHaveLength(1);
    expect(b.depth()).toBe(0);
  });
});
