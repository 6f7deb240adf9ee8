import { createParser } from 'eventsource-parser';

/**
 * One thing a Server-Sent Events stream delivered: an event (its `event:` name, `''` when it
 * had none, its `data:` lines joined with "\n", its `id:` when it had one), or a comment line,
 * which SSE never dispatches as an event and which this helper reports as a frame of its own
 * with an empty `event` and `data`, so tests can wait for `: connected` and `: keep-alive`.
 */
export interface SseFrame {
  event: string;
  data: string;
  id?: string;
  comment: string[];
}

/**
 * A real streaming client: fetch + body reader, frames parsed by eventsource-parser as they
 * arrive (not after the response ends), the way a browser EventSource does.
 */
export interface SseClient {
  response: Response;
  frames: SseFrame[];
  /** Resolves with the first frame (already received or later) that matches. */
  next(match: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  close(): void;
}

export async function openSse(url: string, init: RequestInit = {}): Promise<SseClient> {
  const controller = new AbortController();
  const response = await fetch(url, {
    ...init,
    signal: controller.signal,
    headers: { accept: 'text/event-stream' },
  });
  const frames: SseFrame[] = [];
  const waiters: Array<{ match: (f: SseFrame) => boolean; resolve: (f: SseFrame) => void }> = [];
  let consumed = 0;
  const deliver = (frame: SseFrame) => {
    frames.push(frame);
    for (const waiter of [...waiters]) {
      if (waiter.match(frame)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  };
  const parser = createParser({
    onEvent: ({ event, data, id }) =>
      deliver({ event: event ?? '', data, ...(id === undefined ? {} : { id }), comment: [] }),
    onComment: (comment) => deliver({ event: '', data: '', comment: [comment.trim()] }),
  });
  const pump = async () => {
    if (!response.body) return;
    try {
      for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) parser.feed(chunk);
    } catch {
      // aborted by close()
    }
  };
  void pump();
  return {
    response,
    frames,
    next(match, timeoutMs = 10_000) {
      const seen = frames.slice(consumed).find(match);
      if (seen) {
        consumed = frames.indexOf(seen) + 1;
        return Promise.resolve(seen);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching SSE frame within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          match,
          resolve: (frame) => {
            clearTimeout(timer);
            consumed = frames.indexOf(frame) + 1;
            resolve(frame);
          },
        });
      });
    },
    close() {
      controller.abort();
    },
  };
}
