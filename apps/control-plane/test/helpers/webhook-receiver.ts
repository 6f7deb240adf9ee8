import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

/*
 * A webhook receiver on 127.0.0.1 that checks deliveries exactly as content/concepts/webhooks.md
 * tells receivers to: HMAC-SHA256 over the raw bytes, compared in constant time; the signed
 * `timestamp` no older than the replay window; a `delivery_id` processed once (remembered only
 * after it was processed, so a failed attempt's retry is not taken for a replay).
 */

/** How old a signed timestamp may be, as the docs recommend. */
export const REPLAY_WINDOW_MS = 5 * 60 * 1000;

/** True when `header` is `sha256=<hex>` of the raw body under the secret (the docs' function). */
export function verifySignature(rawBody: Buffer, header: unknown, secret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** One request as the receiver saw it, and what it concluded. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The parsed body, when it was JSON. */
  body: Record<string, any> | undefined;
  /** Signature verified under the receiver's secret (false without a secret or a header). */
  signatureValid: boolean;
  /** The signed timestamp is within the replay window of the receiver's clock. */
  fresh: boolean;
  /** The delivery id was already processed: a duplicate the receiver acknowledged and ignored. */
  replay: boolean;
  /** The status the receiver answered. */
  status: number;
}

/** What the receiver answers the nth request (1-based): a status, a body, or no answer at all. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface ReceiverOptions {
  secret?: string;
  /** Decides each answer; by default 204. */
  answer?: (n: number, request: ReceivedDelivery) => Answer;
  /** The receiver's clock for the replay window (tests pass the control plane's manual clock). */
  now?: () => number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Replaces the answering rule (a receiver "fixed" by its owner). */
  answerWith(answer: (n: number, request: ReceivedDelivery) => Answer): void;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const processed = new Set<string>();
  const hanging = new Set<ServerResponse>();
  const waiters: Array<{ count: number; done: () => void }> = [];
  let answer: (n: number, request: ReceivedDelivery) => Answer = options.answer ?? (() => ({ status: 204 }));
  const now = options.now ?? Date.now;

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks);
    let body: Record<string, any> | undefined;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      body = undefined;
    }
    const signatureValid = options.secret
      ? verifySignature(rawBody, req.headers['x-service-signature'], options.secret)
      : false;
    const signedAt = typeof body?.timestamp === 'string' ? Date.parse(body.timestamp) : Number.NaN;
    const fresh = Math.abs(now() - signedAt) <= REPLAY_WINDOW_MS;
    const deliveryId = typeof body?.delivery_id === 'string' ? body.delivery_id : '';
    const entry: ReceivedDelivery = {
      headers: req.headers,
      rawBody,
      body,
      signatureValid,
      fresh,
      replay: processed.has(deliveryId),
      status: 0,
    };
    received.push(entry);
    for (const waiter of [...waiters]) {
      if (received.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.done();
      }
    }
    const decided = answer(received.length, entry);
    if (decided === 'hang') {
      hanging.add(res);
      return;
    }
    // A receiver with a secret refuses what it cannot verify, whatever the test's rule says.
    const status = options.secret && (!signatureValid || !fresh) ? 401 : decided.status;
    entry.status = status;
    if (status >= 200 && status < 300 && deliveryId) processed.add(deliveryId);
    res.writeHead(status, decided.headers).end(decided.body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks/switchyard`,
    received,
    answerWith(next) {
      answer = next;
    },
    waitFor(count) {
      if (received.length >= count) return Promise.resolve();
      return new Promise((done) => waiters.push({ count, done }));
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
