import { createOutboundClient } from '../../platform/outbound/index.ts';

/**
 * The connections node management calls agents on (health probes, shutdown and restart notices):
 * one pool for the process, with the keep-alive (4 s) and connect timeout (10 s) of Node's default
 * HTTP client. Each call bounds itself with its own timeout. Agents are trusted and live on
 * private networks, as for executions: no address filtering.
 */
export const nodeAgentCalls = createOutboundClient({
  addresses: 'any',
  keepAliveMs: 4_000,
  connectTimeoutMs: 10_000,
});
