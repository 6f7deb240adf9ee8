/**
 * Configuration storage: named configuration texts kept in the database with their newest versions, and
 * the reload of the control plane's own. Mounted under /api/v1/configs by the
 * composition root and under the connector's prefixes by the connector feature.
 */
export { CONFIG_RELOAD_TOPIC } from './events.ts';
export { type ConfigStoreOpenApiOptions, configStoreOpenApi } from './openapi.ts';
export {
  type ConfigVersion,
  type ConfigVersionSummary,
  deleteStoredConfig,
  getStoredConfig,
  listStoredConfigs,
  type PutOutcome,
  putStoredConfig,
  type StoredConfig,
  type StoredConfigSummary,
} from './repository.ts';
export { type ConfigStoreRouterDeps, configStoreRouter } from './routes.ts';
export { MAX_CONFIG_BYTES } from './schemas.ts';
export {
  type ConfigStoreService,
  type ConfigStoreServiceDeps,
  createConfigStoreService,
  type ReloadOutcome,
} from './service.ts';
export { configStoreSettings } from './settings.ts';
