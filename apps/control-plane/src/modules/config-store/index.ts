/** Stored configuration: named configuration texts kept in the database. */
export {
  deleteStoredConfig,
  getStoredConfig,
  listStoredConfigs,
  putStoredConfig,
  type StoredConfig,
} from './repository.ts';
