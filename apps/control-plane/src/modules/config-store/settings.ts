import { integerSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/** Stored configuration (config `config_store:`). */
export const configStoreSettings = {
  maxVersions: setting({
    key: 'config_store.max_versions',
    env: 'SWITCHYARD_CONFIG_STORE_MAX_VERSIONS',
    schema: integerSetting(1, 100_000),
    default: 100,
    fromDatabase: true,
    meaning:
      'Versions kept per stored configuration name, the current one included; each write deletes those older than the newest this many.',
  }),
};
