/** Observability forwarding: platform events batched, signed and posted to an external collector. */
export { BATCH_ID_HEADER, type BatchBody, SERVICE_NAME } from './collector-client.ts';
export {
  createForwarder,
  FORWARDED_STREAMS,
  type Forwarder,
  type ForwarderDeps,
  OBSERVABILITY_TOPIC,
} from './forwarder.ts';
export { observabilityOpenApi } from './openapi.ts';
export { observabilityRouter } from './routes.ts';
export {
  createObservabilityService,
  type ObservabilityService,
  type ObservabilityServiceDeps,
} from './service.ts';
export { type ObservabilitySettings, observabilitySettings } from './settings.ts';
