import { VERSION } from '../../platform/version.ts';
import { createDeliveryClient, type SendResult, send, signature } from '../webhooks/index.ts';
import type { CollectorSettings, ForwardedEvent } from './repository.ts';

/** Names the control plane in every batch (`source.service`) and in User-Agent. */
export const SERVICE_NAME = 'switchyard-control-plane';

/**
 * The header that carries a batch's id, the same on every attempt and on a redrive: the header
 * execution webhooks carry their delivery id in, so one receiver can de-duplicate both alike
 * (and checkWebhook already refuses it as a custom header).
 */
export const BATCH_ID_HEADER = 'X-Service-Delivery-ID';

/** The JSON body of one POST to the collector (content/api/observability.md). */
export interface BatchBody {
  batch_id: string;
  sent_at: string;
  source: { service: string; version: string; replica: string };
  events: ForwardedEvent[];
}

/**
 * The request of one attempt. The body is serialised once: the signature covers these exact
 * bytes. Custom headers go first and ours after them, so a custom header never replaces ours.
 */
export function batchRequest(
  batch: { batchId: string; events: ForwardedEvent[] },
  collector: Pick<CollectorSettings, 'secret' | 'headers'>,
  options: { replicaId: string; at: Date },
): { body: string; headers: Record<string, string> } {
  const payload: BatchBody = {
    batch_id: batch.batchId,
    sent_at: options.at.toISOString(),
    source: { service: SERVICE_NAME, version: VERSION, replica: options.replicaId },
    events: batch.events,
  };
  const body = JSON.stringify(payload);
  const ours: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': `Switchyard-Observability/${VERSION}`,
    [BATCH_ID_HEADER]: batch.batchId,
  };
  if (collector.secret) ours['X-Service-Signature'] = signature(collector.secret, body);
  const taken = new Set(Object.keys(ours).map((name) => name.toLowerCase()));
  const custom = Object.entries(collector.headers).filter(([name]) => !taken.has(name.toLowerCase()));
  return { body, headers: { ...Object.fromEntries(custom), ...ours } };
}

/** Posts batches to the collector; one per forwarder (it owns keep-alive connections). */
export interface CollectorClient {
  post(
    batch: { batchId: string; events: ForwardedEvent[] },
    collector: CollectorSettings,
    at: Date,
  ): Promise<SendResult>;
  destroy(): void;
}

/**
 * Uses the webhooks' delivery client: unless private networks are allowed it refuses, at connect
 * time, any address the URL check would refuse (a name re-pointed at 127.0.0.1 later included).
 */
export function createCollectorClient(options: {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  replicaId: string;
}): CollectorClient {
  const client = createDeliveryClient(options.allowPrivateNetworks);
  return {
    post(batch, collector, at) {
      const request = batchRequest(batch, collector, { replicaId: options.replicaId, at });
      return send(
        { url: collector.url, headers: request.headers, body: request.body },
        { timeoutMs: options.timeoutMs, client },
      );
    },
    destroy() {
      void client.destroy();
    },
  };
}
