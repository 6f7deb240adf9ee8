/** One parsed Server-Sent Events frame. */
export interface SseFrame {
  event: string;
  data: string;
  comment: string[];
}

/**
 * A real streaming client: fetch + body reader, parsing frames as they arrive (not after the
 * response ends), the way a browser EventSource does.
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
  const pump = async () => {
    if (!response.body) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: SseFrame = { event: '', data: '', comment: [] };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment.push(line.slice(1).trim());
            else if (line.startsWith('event:')) frame.event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          frame.data = data.join('\n');
          frames.push(frame);
          for (const waiter of [...waiters]) {
            if (waiter.match(frame)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(frame);
            }
          }
          end = buffer.indexOf('\n\n');
        }
      }
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
