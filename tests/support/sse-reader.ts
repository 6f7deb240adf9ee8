import { createParser } from 'eventsource-parser';

/** One Server-Sent Events frame, its data parsed as JSON. */
export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: any;
}

export interface SseReader {
  /** Every frame received so far, in arrival order. */
  frames: SseFrame[];
  /** Resolves when the server ends the stream (or the test closes it). */
  ended: Promise<void>;
  close(): void;
}

/**
 * A frame's data as JSON, or the text itself when it is not JSON: a throw here would end the read
 * loop below, whose catch is for the test closing the stream, and the frames would silently stop.
 */
function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/**
 * Opens an SSE stream of the control plane and collects its frames (parsed by eventsource-parser).
 * Resolves once the server wrote its `: connected` comment, so whatever happens after the call
 * returns is on the stream. `lastEventId` is sent as the Last-Event-ID header.
 */
export async function openSse(url: string, lastEventId?: string): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(url, {
    signal: controller.signal,
    headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
  });
  if (response.status !== 200)
    throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    throw new Error(`${url} answered ${response.headers.get('content-type')}, not an event stream`);
  }
  const frames: SseFrame[] = [];
  let connected = () => {};
  const ready = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const parser = createParser({
    onEvent: ({ id, event, data }) => frames.push({ id, event, data: data ? parseData(data) : undefined }),
    onComment: (comment) => {
      if (comment.trim() === 'connected') connected();
    },
  });
  const ended = (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        parser.feed(value);
      }
    } catch {
      // closed by the test
    } finally {
      connected();
    }
  })();
  await ready;
  return { frames, ended, close: () => controller.abort() };
}
