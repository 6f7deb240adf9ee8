import { durationSetting, listSetting, optionalTextSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/** Capabilities a connector token may be granted (content/api/connector.md). */
export const CONNECTOR_CAPABILITIES = [
  'reasoners:read',
  'reasoners:write',
  'versions:read',
  'versions:write',
  'restart',
  'config_management',
] as const;
export type ConnectorCapability = (typeof CONNECTOR_CAPABILITIES)[number];

/** The connector API (config `connector:`); never read from a stored config, so a database cannot grant capabilities. */
export const connectorSettings = {
  token: setting({
    key: 'connector.token',
    env: 'SERVICE_CONNECTOR_TOKEN',
    schema: optionalTextSetting(),
    default: undefined,
    fromDatabase: false,
    meaning: 'Bearer token of the connector API (/connector/*); unset disables the connector API.',
  }),
  capabilities: setting({
    key: 'connector.capabilities',
    env: 'SWITCHYARD_CONNECTOR_CAPABILITIES',
    schema: listSetting((item) =>
      (CONNECTOR_CAPABILITIES as readonly string[]).includes(item)
        ? undefined
        : `is not a capability (${CONNECTOR_CAPABILITIES.join(', ')})`,
    ),
    default: ['reasoners:read', 'versions:read', 'versions:write', 'restart'],
    fromDatabase: false,
    meaning: 'What the connector token may do; config_management must be listed to manage stored configs.',
  }),
  cacheTtlMs: setting({
    key: 'connector.cache_ttl',
    env: 'SWITCHYARD_CONNECTOR_CACHE_TTL',
    schema: durationSetting({ min: 0 }),
    default: '30s',
    fromDatabase: false,
    meaning:
      'How long pages of GET /connector/reasoners and /connector/groups are served from cache (any node change clears it; 0 disables).',
  }),
};
