import type { Database } from '@switchyard/shared/db';
import { approvalSettings } from './modules/approvals/index.ts';
import { configStoreSettings, getStoredConfig } from './modules/config-store/index.ts';
import { connectorSettings } from './modules/connector/index.ts';
import { dashboardSettings } from './modules/dashboard/index.ts';
import { discoverySettings } from './modules/discovery/index.ts';
import { executionQueueSettings } from './modules/executions/index.ts';
import { memorySettings } from './modules/memory/index.ts';
import { nodeHealthSettings, nodeLifecycleSettings } from './modules/nodes/index.ts';
import { observabilitySettings } from './modules/observability/index.ts';
import { shareSettings } from './modules/shares/index.ts';
import { webhookSettings } from './modules/webhooks/index.ts';
import {
  DEFAULT_CONFIG_FILE,
  defaultSettings,
  type LoadSettingsOptions,
  loadSettings,
  STORED_CONFIG_NAME,
} from './platform/config/load-config.ts';
import {
  authSettings,
  configSourceSetting,
  loggingSettings,
  serverSettings,
  storageSettings,
} from './platform/config/platform-settings.ts';
import { settingsOf, type ValuesOf } from './platform/config/setting.ts';

export { ConfigError } from './platform/config/load-config.ts';
export { DEFAULT_CONFIG_FILE, STORED_CONFIG_NAME };

/**
 * Every setting of the control plane, grouped the way the typed config reads: the platform's
 * sections and each feature's own, each declared once in its owner's settings.ts.
 */
export const SETTINGS_TREE = {
  server: serverSettings,
  storage: storageSettings,
  api: { auth: authSettings },
  logging: loggingSettings,
  nodes: nodeLifecycleSettings,
  nodeHealth: nodeHealthSettings,
  discovery: discoverySettings,
  executionQueue: { ...executionQueueSettings, ...webhookSettings },
  memory: memorySettings,
  approvals: approvalSettings,
  observability: observabilitySettings,
  configStore: configStoreSettings,
  connector: connectorSettings,
  dashboard: dashboardSettings,
  shares: shareSettings,
  configSource: configSourceSetting,
};

/** The control plane's configuration, every value parsed and checked. */
export type Config = ValuesOf<typeof SETTINGS_TREE>;

/** Every setting in declaration order (the README table and the tests read this list). */
export const SETTINGS = settingsOf(SETTINGS_TREE);

export interface LoadConfigOptions extends Omit<LoadSettingsOptions, 'readStored'> {
  /** The database holding the stored config; read only when config_source is `db`. */
  db?: Database;
}

/** Loads the configuration: environment > stored config (with config_source db) > file > defaults. */
export function loadConfig(options: LoadConfigOptions = {}): Promise<Config> {
  const { db, ...rest } = options;
  return loadSettings(SETTINGS_TREE, {
    ...rest,
    readStored: db ? async () => (await getStoredConfig(db, STORED_CONFIG_NAME))?.body : undefined,
  });
}

/** The configuration from defaults alone; tests and embedders adjust the copy they get. */
export function defaultConfig(): Config {
  return defaultSettings(SETTINGS_TREE);
}
