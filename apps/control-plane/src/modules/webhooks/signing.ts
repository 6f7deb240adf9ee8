import { createHmac } from 'node:crypto';
import { VERSION } from '../../platform/version.ts';
import type { Delivery } from './repository.ts';

/** content/concepts/webhooks.md: `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * The request of one attempt. The body is the stored payload plus this delivery's id and the time
 * of this attempt, serialised once: the signature covers these exact bytes, and the id and time
 * headers repeat the signed values, so a receiver can reject replays using only what is signed.
 * The custom headers go first and ours after them, so a custom header can never replace ours.
 */
export function attemptRequest(
  delivery: Delivery,
  at: Date,
): { body: string; headers: Record<string, string> } {
  const timestamp = at.toISOString();
  const body = JSON.stringify({ ...delivery.payload, delivery_id: delivery.deliveryId, timestamp });
  const ours: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': `Switchyard-Webhooks/${VERSION}`,
    'X-Service-Event': delivery.event,
    'X-Service-Delivery-ID': delivery.deliveryId,
    'X-Service-Timestamp': timestamp,
  };
  if (delivery.secret) ours['X-Service-Signature'] = signature(delivery.secret, body);
  const taken = new Set(Object.keys(ours).map((name) => name.toLowerCase()));
  const custom = Object.entries(delivery.headers).filter(([name]) => !taken.has(name.toLowerCase()));
  return { body, headers: { ...Object.fromEntries(custom), ...ours } };
}
