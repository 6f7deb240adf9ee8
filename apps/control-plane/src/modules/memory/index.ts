/**
 * Memory: scoped key-value memory, vector memory and the memory event streams (content/concepts/memory.md). Other
 * features and the composition root reach it only through this file.
 */
export { memoryEventsOpenApi } from './event-openapi.ts';
export { memoryEventsRouter } from './event-routes.ts';
export { memoryEventSocketRouter } from './event-socket.ts';
export { MEMORY_CHANGE, MEMORY_STREAM, type MemoryChange } from './events.ts';
export { createMemoryMetrics, type MemoryMetrics } from './metrics.ts';
export { memoryOpenApi } from './openapi.ts';
export { memoryRouter } from './routes.ts';
export { createMemoryService, type MemoryService } from './service.ts';
export { memorySettings } from './settings.ts';
export { vectorMemoryOpenApi } from './vector-openapi.ts';
export { vectorMemoryRouter } from './vector-routes.ts';
export { createVectorService, type VectorService } from './vector-service.ts';
