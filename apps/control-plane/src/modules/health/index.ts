/** The control plane's own health report (GET /api/v1/health), built from named probes. */
export { healthOpenApi } from './openapi.ts';
export { healthRouter } from './routes.ts';
export { createHealthService, type HealthProbe, type HealthService, storageProbe } from './service.ts';
