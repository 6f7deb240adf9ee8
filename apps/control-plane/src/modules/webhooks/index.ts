/**
 * Webhooks: validation of the webhook an async execution registers, the delivery outbox, the
 * per-replica delivery workers (signed, retried, dead-lettered), and the operator's API (history,
 * dead-letter queue, manual retry). Other features reach it only through this file.
 */

export {
  backoffMs,
  createWebhookDispatcher,
  WEBHOOKS_TOPIC,
  type WebhookDispatcher,
  type WebhookDispatcherDeps,
} from './dispatcher.ts';
export { createDeliveryClient, type SendResult, send } from './http-delivery.ts';
export { webhooksOpenApi } from './openapi.ts';
export type { WebhookEvent } from './repository.ts';
export { webhooksRouter } from './routes.ts';
export {
  createWebhookService,
  type ExecutionExists,
  enqueueWebhookDelivery,
  type WebhookService,
  type WebhookServiceDeps,
} from './service.ts';
export { type WebhookSettings, webhookSettings } from './settings.ts';
export { signature } from './signing.ts';
export { checkWebhook, type HostLookup, type WebhookCheck, type WebhookConfig } from './webhook-check.ts';
