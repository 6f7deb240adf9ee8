/** Where a {@link FrameQueue} writes: one streaming connection (SSE response, WebSocket). */
export interface FrameSink {
  /** Bytes handed to the connection that have not left this process yet. */
  buffered(): number;
  /** Writes one frame. */
  write(frame: string): void;
  /** Ends the connection at once: its consumer fell too far behind. */
  drop(): void;
}

/** Paces the frames of one streaming connection; see {@link createFrameQueue}. */
export interface FrameQueue {
  /** Queues a frame; it is written as soon as the connection has room. */
  push(frame: string): void;
  /** Starts writing to the connection, which frames pushed so far have been waiting for. */
  open(sink: FrameSink): void;
  /**
   * Marks the frames pushed from now on as live (written as they happen, not read from the log
   * for this consumer alone): a consumer more than `maxBufferedBytes` behind them is dropped.
   */
  live(): void;
  /**
   * Resolves once every queued frame has been written and the connection holds at most a quarter
   * of `maxBufferedBytes`, or once the queue has closed: what a catch-up reader awaits before its
   * next batch.
   */
  room(): Promise<void>;
  /** Tells the queue the connection flushed some output (a 'drain', a send callback). */
  flushed(): void;
  /** Stops writing and releases whoever waits for room; later pushes are ignored. */
  close(): void;
}

/**
 * The pacing and the slow-consumer bound of a streaming connection, shared by the SSE and
 * WebSocket routes. Frames are written while the connection holds at most a quarter of the bound
 * and wait in the queue otherwise, so a catch-up from an old id (many large frames read in one
 * batch) reaches the client at its own pace instead of tripping the bound: the reader awaits
 * `room()` between batches. Live frames cannot wait for anyone (the log's tail fans out to every
 * consumer at once), so a consumer whose live backlog (queued here plus buffered in the
 * connection, counted after any catch-up still in flight) exceeds `maxBufferedBytes` is dropped
 * when the next frame arrives: it costs bounded memory and never slows the others. The frame
 * being added is not counted, so one frame larger than the bound still goes out. A consumer
 * that takes nothing for `stallMs` while frames wait for it is dropped too: otherwise one that
 * stops reading while catching up would hold its batch for as long as it stays connected.
 */
export function createFrameQueue(options: { maxBufferedBytes?: number; stallMs?: number } = {}): FrameQueue {
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const stallMs = options.stallMs ?? 15_000;
  const highWater = maxBuffered / 4;
  const waiting: Array<{ frame: string; bytes: number }> = [];
  const roomWaiters: Array<() => void> = [];
  let sink: FrameSink | undefined;
  /** Bytes pushed, and bytes written to the sink, since the start. */
  let accepted = 0;
  let written = 0;
  /** `accepted` when the frames became live: bytes before it are catch-up, paced by room(). */
  let liveFrom: number | undefined;
  let closed = false;
  /** Runs while frames wait, checking that the consumer takes some output every `stallMs`. */
  let stallTimer: NodeJS.Timeout | undefined;

  const hasRoom = () => waiting.length === 0 && (sink === undefined || sink.buffered() <= highWater);

  function wakeRoomWaiters(): void {
    for (const wake of roomWaiters.splice(0)) wake();
  }

  /** Bytes the connection has passed on: written to it, less what it still holds. */
  const sent = () => written - (sink?.buffered() ?? 0);

  function watchForStall(): void {
    if (stallTimer) return;
    let before = sent();
    stallTimer = setInterval(() => {
      const now = sent();
      if (now > before) {
        before = now;
        return;
      }
      queue.close();
      sink?.drop();
    }, stallMs);
    stallTimer.unref();
  }

  function pump(): void {
    if (!sink || closed) return;
    while (waiting.length > 0 && sink.buffered() <= highWater) {
      const next = waiting.shift()!;
      written += next.bytes;
      sink.write(next.frame);
      if (closed) return;
    }
    if (waiting.length > 0) {
      watchForStall();
    } else {
      clearInterval(stallTimer);
      stallTimer = undefined;
    }
    if (hasRoom()) wakeRoomWaiters();
  }

  const queue: FrameQueue = {
    push(frame) {
      if (closed) return;
      if (liveFrom !== undefined) {
        const flushed = written - (sink?.buffered() ?? 0);
        if (accepted - Math.max(flushed, liveFrom) > maxBuffered) {
          queue.close();
          sink?.drop();
          return;
        }
      }
      const bytes = Buffer.byteLength(frame);
      accepted += bytes;
      waiting.push({ frame, bytes });
      pump();
    },
    open(target) {
      if (sink) throw new Error('frame queue already open');
      sink = target;
      pump();
    },
    live() {
      liveFrom ??= accepted;
    },
    room() {
      if (closed || (sink && hasRoom())) return Promise.resolve();
      return new Promise((resolve) => roomWaiters.push(resolve));
    },
    flushed: pump,
    close() {
      if (closed) return;
      closed = true;
      clearInterval(stallTimer);
      waiting.length = 0;
      wakeRoomWaiters();
    },
  };
  return queue;
}
