/** The control plane's one HTTP client for calls to other services (see client.ts). */
export { type AddressPolicy, nonPublicReason } from './address-rule.ts';
export {
  createOutboundClient,
  type OutboundClient,
  type OutboundClientOptions,
  type OutboundRequest,
  type OutboundResponse,
} from './client.ts';
export { OutboundError, type OutboundFailure } from './errors.ts';
