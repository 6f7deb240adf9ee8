/** Observability forwarding: platform events batched, signed and posted to an external collector. */
export { type ObservabilitySettings, observabilitySettings } from './settings.ts';
