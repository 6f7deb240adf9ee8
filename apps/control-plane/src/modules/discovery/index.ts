/** Discovery: what the fleet can do right now, filtered, cached and rendered as json, xml or compact. */
export { createDiscoveryMetrics } from './metrics.ts';
export { discoveryOpenApi } from './openapi.ts';
export { discoveryRouter } from './routes.ts';
export { DiscoveryQuerySchema } from './schemas.ts';
export { createDiscoveryService, type DiscoveryService } from './service.ts';
export { discoverySettings } from './settings.ts';
