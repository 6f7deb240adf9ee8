import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

function normalise(address: string): string {
  const trimmed = address.trim();
  // An IPv4 client on a dual-stack socket shows up as ::ffff:a.b.c.d; it is the same client.
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}

/** The address of the connection's peer, as the rate limit keys it when no proxy is trusted. */
export function peerAddress(socket: Socket): string {
  return normalise(socket.remoteAddress ?? 'unknown');
}

/**
 * The address the rate limit is keyed on. X-Forwarded-For is only believed for the configured
 * number of trusted proxy hops, counted from the right: each trusted proxy appends the address
 * it saw, so the entries further left are whatever the client chose to send.
 */
export function clientAddress(req: IncomingMessage, trustedProxyHops: number): string {
  const peer = peerAddress(req.socket);
  if (trustedProxyHops <= 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (!raw) return peer;
  const hops = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (hops.length === 0) return peer;
  const index = Math.max(0, hops.length - trustedProxyHops);
  const candidate = hops[index]!;
  // A garbled entry is not an address; keying on it would let a client mint unlimited budgets.
  return /^[0-9a-fA-F:.]{2,45}$/.test(candidate) ? normalise(candidate) : peer;
}
