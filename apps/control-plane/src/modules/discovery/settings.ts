import { durationSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/** The discovery answer cache (config `discovery:`). */
export const discoverySettings = {
  cacheTtlMs: setting({
    key: 'discovery.cache_ttl',
    env: 'SWITCHYARD_DISCOVERY_CACHE_TTL',
    schema: durationSetting({ min: 0 }),
    default: '30s',
    fromDatabase: true,
    meaning: 'How long a discovery answer is served from cache (any node change clears it; 0 disables).',
  }),
};
