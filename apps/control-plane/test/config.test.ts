import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  defaultConfig,
  loadConfig,
  SETTINGS,
  SETTINGS_TREE,
  STORED_CONFIG_NAME,
} from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import {
  deleteStoredConfig,
  getStoredConfig,
  listStoredConfigs,
  putStoredConfig,
} from '../src/modules/config-store/repository.ts';
import { createConfigReloader, createLiveConfig } from '../src/platform/config/live-config.ts';
import { checkStoredSettings } from '../src/platform/config/load-config.ts';
import { settingsTable } from '../src/platform/config/setting.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';

let handle: TestDatabase;
let dir: string;
let logged: string[];
const log = (line: string) => logged.push(line);

function writeYaml(text: string): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

async function loadError(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  dir = mkdtempSync(join(tmpdir(), 'sy-config-'));
});

afterAll(async () => {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  logged = [];
  await handle.db('configs').delete();
  await handle.db('config_versions').delete();
});

describe('loadConfig defaults', () => {
  it('gives the documented defaults when nothing is set', async () => {
    const config = await loadConfig({ env: {}, filePath: undefined, log });
    expect(config).toEqual({
      server: { port: 8080, host: '127.0.0.1' },
      storage: { databaseUrl: undefined, dataDir: resolve('.data') },
      api: { auth: { apiKey: undefined, skipPaths: [] } },
      logging: { level: 'info', format: 'auto' },
      nodes: {
        heartbeatTtlMs: 15_000,
        maxHeartbeatTtlMs: 120_000,
        assumedHeartbeatIntervalMs: 30_000,
        sweepIntervalMs: 5_000,
        hardEvictMs: 300_000,
        evictedRetentionMs: 604_800_000,
        statusCacheTtlMs: 300_000,
        reconcileIntervalMs: 30_000,
        maxTransitionMs: 120_000,
      },
      nodeHealth: {
        checkIntervalMs: 30_000,
        checkTimeoutMs: 5_000,
        consecutiveFailures: 3,
        recoveryDebounceMs: 60_000,
        heartbeatStaleThresholdMs: 60_000,
      },
      discovery: { cacheTtlMs: 30_000 },
      executionQueue: {
        syncTimeoutMs: 60_000,
        queueSize: 10_000,
        dispatchConcurrency: 64,
        maxConcurrentPerNode: 32,
        answerTimeoutMs: 600_000,
        orphanGraceMs: 120_000,
        maxSilenceMs: 86_400_000,
        webhookMaxAttempts: 3,
        webhookInitialBackoffMs: 1_000,
        webhookMaxBackoffMs: 5_000,
        webhookTimeoutMs: 10_000,
        webhookWorkers: 4,
        webhookQueueSize: 256,
        webhookAllowHttp: false,
        webhookAllowPrivateNetworks: false,
      },
      memory: {
        maxValueBytes: 1_048_576,
        scopeMaxEntries: 1_000_000,
        scopeMaxBytes: 268_435_456,
        maxVectorDimensions: 4096,
        vectorSearch: 'auto',
        vectorEfSearch: 100,
        vectorSearchResponse: 'results',
      },
      approvals: {
        defaultExpiryMs: 86_400_000,
        maxExpiryMs: 2_592_000_000,
        webhookSecret: undefined,
        webhookToleranceMs: 300_000,
        callbackTimeoutMs: 10_000,
        callbackMaxBackoffMs: 300_000,
        sweepIntervalMs: 5_000,
      },
      observability: {
        batchSize: 10,
        batchTimeoutMs: 1_000,
        httpTimeoutMs: 10_000,
        maxAttempts: 3,
        initialBackoffMs: 1_000,
        maxBackoffMs: 30_000,
        workers: 2,
        queueSize: 1000,
        snapshotIntervalMs: 60_000,
      },
      configStore: { maxVersions: 100 },
      connector: {
        token: undefined,
        capabilities: ['reasoners:read', 'versions:read', 'versions:write', 'restart'],
        cacheTtlMs: 30_000,
      },
      dashboard: { dir: undefined },
      shares: { docsUrl: undefined, publishUrl: undefined, publishTimeoutMs: 10_000 },
      configSource: 'file',
    });
    expect(defaultConfig()).toEqual(config);
  });
});

describe('loadConfig from a YAML file', () => {
  it('reads every section under its file keys', async () => {
    const filePath = writeYaml(`
server:
  port: 9090
  host: 0.0.0.0
storage:
  data_dir: /var/lib/switchyard
api:
  auth:
    api_key: file-key
    skip_paths: [/api/v1/public/*, /status]
node_lifecycle:
  heartbeat_ttl: 20s
  max_heartbeat_ttl: 3m
  assumed_heartbeat_interval: 10s
  sweep_interval: 2s
  hard_evict_ttl: 10m
  evicted_retention: 24h
  status_cache_ttl: 1m
  reconcile_interval: 45s
  max_transition_time: 3m
node_health:
  check_interval: 10s
  check_timeout: 1500ms
  consecutive_failures: 5
  recovery_debounce: 2m
  heartbeat_stale_threshold: 90s
discovery:
  cache_ttl: 0
execution_queue:
  sync_timeout: 2m
  queue_size: 50
  dispatch_concurrency: 8
  max_concurrent_per_node: 3
  answer_timeout: 90s
  orphan_grace: 30s
  max_silence: 0
  webhook_max_attempts: 5
  webhook_initial_backoff: 500ms
  webhook_max_backoff: 30s
  webhook_timeout: 3s
  webhook_workers: 2
  webhook_queue_size: 64
  webhook_allow_http: true
  webhook_allow_private_networks: true
memory:
  max_value_bytes: 4096
  scope_max_entries: 500
  scope_max_bytes: 1048576
  max_vector_dimensions: 1536
  vector_search: exact
  vector_ef_search: 200
  vector_search_response: array
approvals:
  default_expiry: 2h
  max_expiry: 48h
  webhook_secret: approval-secret
  webhook_tolerance: 1m
  callback_timeout: 2s
  callback_max_backoff: 30s
  sweep_interval: 1s
observability:
  batch_size: 50
  batch_timeout: 250ms
  http_timeout: 2s
  max_attempts: 5
  initial_backoff: 200ms
  max_backoff: 10s
  workers: 4
  queue_size: 500
  snapshot_interval: 0
config_store:
  max_versions: 20
connector:
  token: conn-token
  capabilities: [reasoners:read, config_management]
  cache_ttl: 5s
`);
    const config = await loadConfig({ env: {}, filePath, log });
    expect(config.server).toEqual({ port: 9090, host: '0.0.0.0' });
    expect(config.storage.dataDir).toBe('/var/lib/switchyard');
    expect(config.api.auth).toEqual({ apiKey: 'file-key', skipPaths: ['/api/v1/public/*', '/status'] });
    expect(config.nodes).toEqual({
      heartbeatTtlMs: 20_000,
      maxHeartbeatTtlMs: 180_000,
      assumedHeartbeatIntervalMs: 10_000,
      sweepIntervalMs: 2_000,
      hardEvictMs: 600_000,
      evictedRetentionMs: 86_400_000,
      statusCacheTtlMs: 60_000,
      reconcileIntervalMs: 45_000,
      maxTransitionMs: 180_000,
    });
    expect(config.nodeHealth).toEqual({
      checkIntervalMs: 10_000,
      checkTimeoutMs: 1_500,
      consecutiveFailures: 5,
      recoveryDebounceMs: 120_000,
      heartbeatStaleThresholdMs: 90_000,
    });
    expect(config.discovery.cacheTtlMs).toBe(0);
    expect(config.executionQueue).toEqual({
      syncTimeoutMs: 120_000,
      queueSize: 50,
      dispatchConcurrency: 8,
      maxConcurrentPerNode: 3,
      answerTimeoutMs: 90_000,
      orphanGraceMs: 30_000,
      maxSilenceMs: 0,
      webhookMaxAttempts: 5,
      webhookInitialBackoffMs: 500,
      webhookMaxBackoffMs: 30_000,
      webhookTimeoutMs: 3_000,
      webhookWorkers: 2,
      webhookQueueSize: 64,
      webhookAllowHttp: true,
      webhookAllowPrivateNetworks: true,
    });
    expect(config.memory).toEqual({
      maxValueBytes: 4096,
      scopeMaxEntries: 500,
      scopeMaxBytes: 1_048_576,
      maxVectorDimensions: 1536,
      vectorSearch: 'exact',
      vectorEfSearch: 200,
      vectorSearchResponse: 'array',
    });
    expect(config.approvals).toEqual({
      defaultExpiryMs: 7_200_000,
      maxExpiryMs: 172_800_000,
      webhookSecret: 'approval-secret',
      webhookToleranceMs: 60_000,
      callbackTimeoutMs: 2_000,
      callbackMaxBackoffMs: 30_000,
      sweepIntervalMs: 1_000,
    });
    expect(config.observability).toEqual({
      batchSize: 50,
      batchTimeoutMs: 250,
      httpTimeoutMs: 2_000,
      maxAttempts: 5,
      initialBackoffMs: 200,
      maxBackoffMs: 10_000,
      workers: 4,
      queueSize: 500,
      snapshotIntervalMs: 0,
    });
    expect(config.configStore).toEqual({ maxVersions: 20 });
    expect(config.connector).toEqual({
      token: 'conn-token',
      capabilities: ['reasoners:read', 'config_management'],
      cacheTtlMs: 5_000,
    });
  });

  it('finds the file through SERVICE_CONFIG_FILE', async () => {
    const filePath = writeYaml('server:\n  port: 7000\n');
    const config = await loadConfig({ env: { SERVICE_CONFIG_FILE: filePath }, log });
    expect(config.server.port).toBe(7000);
  });

  it('refuses a named file that does not exist', async () => {
    const error = await loadError(
      loadConfig({ env: { SERVICE_CONFIG_FILE: join(dir, 'missing.yaml') }, log }),
    );
    expect(error.problems[0]).toMatch(/missing\.yaml does not exist/);
  });

  it('names the key and the file for a bad duration', async () => {
    const filePath = writeYaml('node_health:\n  check_interval: abc\n');
    const error = await loadError(loadConfig({ env: {}, filePath, log }));
    expect(error.problems).toEqual([
      `node_health.check_interval: "abc" is not a duration (use 15s, 5m) — from file ${filePath}`,
    ]);
    expect(error.message).toContain('node_health.check_interval: "abc" is not a duration (use 15s, 5m)');
  });

  it('refuses unknown keys and says which keys exist there', async () => {
    const filePath = writeYaml('node_health:\n  check_intervall: 5s\nloggin: true\n');
    const error = await loadError(loadConfig({ env: {}, filePath, log }));
    expect(error.problems).toHaveLength(2);
    expect(error.problems[0]).toMatch(/^node_health\.check_intervall: unknown setting .*check_interval/);
    expect(error.problems[1]).toMatch(/^loggin: unknown setting/);
    expect(error.problems[1]).toContain(
      '(known here: server, storage, api, logging, node_lifecycle, node_health, discovery,',
    );
  });

  it('does not treat inherited object names as settings', async () => {
    const filePath = writeYaml('constructor: 1\n__proto__:\n  port: 1\n');
    const error = await loadError(loadConfig({ env: {}, filePath, log }));
    expect(error.problems.join('\n')).toMatch(/constructor: unknown setting/);
  });

  it('reports malformed YAML and a document that is not a mapping', async () => {
    const broken = await loadError(loadConfig({ env: {}, filePath: writeYaml('server: [1, 2\n'), log }));
    expect(broken.problems[0]).toMatch(/is not valid YAML/);
    const scalar = await loadError(loadConfig({ env: {}, filePath: writeYaml('just text\n'), log }));
    expect(scalar.problems[0]).toMatch(/\(top level\): expected a mapping/);
    const listSection = await loadError(
      loadConfig({ env: {}, filePath: writeYaml('server:\n  - 1\n'), log }),
    );
    expect(listSection.problems[0]).toMatch(/^server: expected a mapping/);
  });

  it('reads an empty file as no settings', async () => {
    const config = await loadConfig({ env: {}, filePath: writeYaml(''), log });
    expect(config).toEqual(defaultConfig());
  });

  it('collects every problem at once, each with its own key', async () => {
    const filePath = writeYaml(`
server:
  port: 70000
node_health:
  consecutive_failures: 0
  check_timeout: -5s
api:
  auth:
    skip_paths: [no-slash, /a*b]
connector:
  capabilities: [reasoners:read, everything]
storage:
  database_url: mysql://x
config_source: cloud
`);
    const error = await loadError(loadConfig({ env: {}, filePath, log }));
    const keys = error.problems.map((p) => p.split(':')[0]);
    expect(keys).toEqual([
      'server.port',
      'storage.database_url',
      'api.auth.skip_paths',
      'node_health.check_timeout',
      'node_health.consecutive_failures',
      'connector.capabilities',
      'config_source',
    ]);
    expect(error.problems.every((p) => p.endsWith(`— from file ${filePath}`))).toBe(true);
  });
});

describe('loadConfig from the environment', () => {
  it('overrides the file key by key', async () => {
    const filePath = writeYaml(
      'server:\n  port: 9090\n  host: 0.0.0.0\nnode_health:\n  check_interval: 10s\n',
    );
    const config = await loadConfig({
      env: {
        CONTROL_PLANE_PORT: '9191',
        SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL: '1m',
        SERVICE_API_KEY: 'env-key',
        SWITCHYARD_API_AUTH_SKIP_PATHS: '/a, /b/*',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
        SWITCHYARD_CONNECTOR_CAPABILITIES: 'restart',
      },
      filePath,
      log,
    });
    expect(config.server).toEqual({ port: 9191, host: '0.0.0.0' });
    expect(config.nodeHealth.checkIntervalMs).toBe(60_000);
    expect(config.api.auth).toEqual({ apiKey: 'env-key', skipPaths: ['/a', '/b/*'] });
    expect(config.storage.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/test');
    expect(config.connector.capabilities).toEqual(['restart']);
  });

  it('reads the docs site of shared runs from SWITCHYARD_DOCS_URL, without its trailing slash, and refuses one that is not http(s)', async () => {
    const config = await loadConfig({ env: { SWITCHYARD_DOCS_URL: 'https://docs.example.com/' }, log });
    expect(config.shares.docsUrl).toBe('https://docs.example.com');
    for (const bad of ['docs.example.com', 'ftp://docs.example.com']) {
      const error = await loadError(loadConfig({ env: { SWITCHYARD_DOCS_URL: bad }, log }));
      expect(error.message).toContain('SWITCHYARD_DOCS_URL');
    }
  });

  it('has one environment variable per setting, all different', () => {
    const names = SETTINGS.map((s) => s.env);
    expect(new Set(names).size).toBe(names.length);
  });

  it('reads an empty variable as unset, so an empty SERVICE_API_KEY leaves auth off', async () => {
    const config = await loadConfig({ env: { SERVICE_API_KEY: '', CONTROL_PLANE_PORT: '' }, log });
    expect(config.api.auth.apiKey).toBeUndefined();
    expect(config.server.port).toBe(8080);
  });

  it('names the variable for a bad value', async () => {
    const error = await loadError(
      loadConfig({
        env: { SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL: 'abc', CONTROL_PLANE_PORT: 'eighty' },
        log,
      }),
    );
    expect(error.problems).toEqual([
      'server.port: "eighty" is not a whole number from 0 to 65535 — from environment variable CONTROL_PLANE_PORT',
      'node_health.check_interval: "abc" is not a duration (use 15s, 5m) — from environment variable SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL',
    ]);
  });

  it('reads booleans as words and refuses anything else', async () => {
    const on = await loadConfig({ env: { SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'Yes' }, log });
    expect(on.executionQueue.webhookAllowHttp).toBe(true);
    const error = await loadError(
      loadConfig({ env: { SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'maybe' }, log }),
    );
    expect(error.problems[0]).toMatch(/^execution_queue\.webhook_allow_http: "maybe" is not true or false/);
  });

  it('reads the vector search answer shape and refuses one that is not results or array', async () => {
    const env = (value: string) => ({ SWITCHYARD_MEMORY_VECTOR_SEARCH_RESPONSE: value });
    expect((await loadConfig({ env: env(' array '), log })).memory.vectorSearchResponse).toBe('array');
    const error = await loadError(loadConfig({ env: env('bare'), log }));
    expect(error.problems).toEqual([
      'memory.vector_search_response: "bare" is not one of results, array — from environment variable SWITCHYARD_MEMORY_VECTOR_SEARCH_RESPONSE',
    ]);
  });

  it('refuses a zero interval where zero would spin', async () => {
    const error = await loadError(
      loadConfig({ env: { SWITCHYARD_NODE_LIFECYCLE_SWEEP_INTERVAL: '0' }, log }),
    );
    expect(error.problems[0]).toMatch(/^node_lifecycle\.sweep_interval: "0" is too short/);
  });
});

describe('loadConfig from the database (SERVICE_CONFIG_SOURCE=db)', () => {
  it('puts the stored config between the environment and the file', async () => {
    await putStoredConfig(handle.db, {
      name: STORED_CONFIG_NAME,
      body: 'node_health:\n  check_interval: 20s\n  check_timeout: 2s\nserver:\n  port: 9300\n',
      updatedBy: 'test',
    });
    const filePath = writeYaml('node_health:\n  check_interval: 10s\n  consecutive_failures: 7\n');
    const config = await loadConfig({
      env: { SERVICE_CONFIG_SOURCE: 'db', CONTROL_PLANE_PORT: '9400' },
      db: handle.db,
      filePath,
      log,
    });
    expect(config.configSource).toBe('db');
    expect(config.nodeHealth.checkIntervalMs).toBe(20_000); // database over file
    expect(config.nodeHealth.checkTimeoutMs).toBe(2_000); // database over default
    expect(config.nodeHealth.consecutiveFailures).toBe(7); // file where the database is silent
    expect(config.server.port).toBe(9400); // environment over database
  });

  it('never takes the storage or connector sections from the database, and says so', async () => {
    await putStoredConfig(handle.db, {
      name: STORED_CONFIG_NAME,
      body: [
        'storage:',
        '  database_url: postgres://attacker@evil:5432/x',
        '  data_dir: /tmp/elsewhere',
        'connector:',
        '  token: stolen',
        '  capabilities: [config_management]',
        'config_source: file',
        'discovery:',
        '  cache_ttl: 5s',
      ].join('\n'),
    });
    const config = await loadConfig({ env: { SERVICE_CONFIG_SOURCE: 'db' }, db: handle.db, log });
    expect(config.storage).toEqual({ databaseUrl: undefined, dataDir: resolve('.data') });
    expect(config.connector.token).toBeUndefined();
    expect(config.connector.capabilities).not.toContain('config_management');
    expect(config.configSource).toBe('db');
    expect(config.discovery.cacheTtlMs).toBe(5_000);
    const ignored = logged.filter((line) => line.startsWith('config: ignored'));
    expect(ignored).toHaveLength(5);
    expect(ignored[0]).toContain('storage.database_url');
    expect(ignored.join('\n')).toMatch(/never read from the database/);
  });

  it('ignores the stored config unless the source is db', async () => {
    await putStoredConfig(handle.db, { name: STORED_CONFIG_NAME, body: 'server:\n  port: 9300\n' });
    const config = await loadConfig({ env: {}, db: handle.db, log });
    expect(config.server.port).toBe(8080);
  });

  it('takes config_source from the file too', async () => {
    await putStoredConfig(handle.db, { name: STORED_CONFIG_NAME, body: 'server:\n  port: 9300\n' });
    const config = await loadConfig({
      env: {},
      db: handle.db,
      filePath: writeYaml('config_source: db\n'),
      log,
    });
    expect(config.server.port).toBe(9300);
  });

  it('names the stored config for a bad value there', async () => {
    await putStoredConfig(handle.db, { name: STORED_CONFIG_NAME, body: 'discovery:\n  cache_ttl: soon\n' });
    const error = await loadError(loadConfig({ env: { SERVICE_CONFIG_SOURCE: 'db' }, db: handle.db, log }));
    expect(error.problems).toEqual([
      'discovery.cache_ttl: "soon" is not a duration (use 15s, 5m) — from database config "control-plane"',
    ]);
  });

  it('takes the vector search answer shape from the stored config, and names it for a bad value', async () => {
    const stored = (value: string) =>
      putStoredConfig(handle.db, {
        name: STORED_CONFIG_NAME,
        body: `memory:\n  vector_search_response: ${value}\n`,
      });
    await stored('array');
    const config = await loadConfig({ env: { SERVICE_CONFIG_SOURCE: 'db' }, db: handle.db, log });
    expect(config.memory.vectorSearchResponse).toBe('array');
    await stored('[results]');
    const error = await loadError(loadConfig({ env: { SERVICE_CONFIG_SOURCE: 'db' }, db: handle.db, log }));
    expect(error.problems).toEqual([
      'memory.vector_search_response: ["results"] is not one of results, array — from database config "control-plane"',
    ]);
  });

  it('notes a missing stored config and carries on', async () => {
    const config = await loadConfig({ env: { SERVICE_CONFIG_SOURCE: 'db' }, db: handle.db, log });
    expect(config.server.port).toBe(8080);
    expect(logged).toEqual([expect.stringMatching(/no stored config named "control-plane"/)]);
  });
});

describe('settings documents beyond what a settings document needs', () => {
  // The YAML parser composes nested collections recursively and checks keys pairwise: a few KB
  // nested thousands deep crashed the whole process (a fatal V8 out-of-memory while the stack was
  // deep, not an exception), and a flat mapping of 70,000 keys held the event loop for minutes.
  // Such documents are refused before the parser sees them.
  const check = (text: string) => checkStoredSettings(SETTINGS_TREE, text, 'request body');

  it('refuses nesting past 32 levels, in flow and block style, without composing it', () => {
    for (const text of [
      '{'.repeat(2000),
      '['.repeat(2000),
      '{'.repeat(14_000),
      '['.repeat(14_000),
      `${'['.repeat(40)}${']'.repeat(40)}`,
      '- '.repeat(40),
      Array.from({ length: 40 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'),
    ]) {
      const issues = check(text);
      expect(issues, text.slice(0, 50)).toHaveLength(1);
      expect(issues[0]).toMatchObject({ key: '(document)', source: 'request body' });
      expect(issues[0]!.message).toMatch(/nested more than 32 levels deep/);
    }
    // 32 levels parse as usual (and fail for what they are).
    expect(check(`${'['.repeat(32)}${']'.repeat(32)}`)[0]!.message).toMatch(/expected a mapping/);
  });

  it('refuses more than 1000 entries and more than 64 KiB, reporting one problem', () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}: v`).join('\n');
    const many = check(keys);
    expect(many).toHaveLength(1);
    expect(many[0]!.message).toMatch(/more than 1000 entries/);
    const long = check(`# ${'x'.repeat(64 * 1024)}\nlogging:\n  level: debug\n`);
    expect(long).toHaveLength(1);
    expect(long[0]).toMatchObject({ key: '(document)', source: 'request body' });
    expect(long[0]!.message).toMatch(/is 65563 bytes; a settings document is at most 65536 bytes/);
    // Under the limit, a long comment is just a comment.
    expect(check(`logging:\n  level: debug\n# ${'x'.repeat(60 * 1024)}\n`)).toEqual([]);
  });

  it('applies the same limits to the file a load reads', async () => {
    const error = await loadError(loadConfig({ env: {}, filePath: writeYaml('['.repeat(5000)), log }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.message).toMatch(/nested more than 32 levels deep/);
  });
});

describe('configs storage', () => {
  it('creates, replaces, lists and deletes stored configs', async () => {
    const first = await putStoredConfig(handle.db, { name: 'alpha', body: 'a: 1\n', updatedBy: 'ops' });
    expect(first).toMatchObject({
      created: true,
      config: { name: 'alpha', version: 1, bytes: 5, updatedBy: 'ops' },
    });
    expect(new Date(first.config.createdAt).toISOString()).toBe(first.config.createdAt);
    const replaced = await putStoredConfig(handle.db, { name: 'alpha', body: 'a: 2\n' });
    expect(replaced).toMatchObject({ created: false, config: { version: 2, updatedBy: null } });
    expect(replaced.config.createdAt).toBe(first.config.createdAt);
    expect((await getStoredConfig(handle.db, 'alpha'))?.body).toBe('a: 2\n');
    await putStoredConfig(handle.db, { name: 'beta', body: '' });
    expect((await listStoredConfigs(handle.db)).map((c) => c.name)).toEqual(['alpha', 'beta']);
    expect(await deleteStoredConfig(handle.db, { name: 'alpha' })).toEqual({ version: 3 });
    expect(await deleteStoredConfig(handle.db, { name: 'alpha' })).toBeUndefined();
    expect(await getStoredConfig(handle.db, 'alpha')).toBeUndefined();
    expect((await listStoredConfigs(handle.db)).map((c) => c.name)).toEqual(['beta']);
  });

  it('works inside a transaction', async () => {
    await handle.db.transaction(async (trx) => {
      await putStoredConfig(trx, { name: 'in-trx', body: 'x: 1\n' });
      expect((await getStoredConfig(trx, 'in-trx'))?.body).toBe('x: 1\n');
    });
    expect((await getStoredConfig(handle.db, 'in-trx'))?.body).toBe('x: 1\n');
  });
});

describe('README settings table', () => {
  it('is exactly the table rendered from the settings declarations', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    // Regenerate with `npx tsx scripts/settings-table.ts` after changing a declaration.
    expect(readme).toContain(settingsTable(SETTINGS));
  });

  it('is the same table on the settings reference page of the docs', () => {
    const page = readFileSync(new URL('../../../content/reference/settings.md', import.meta.url), 'utf8');
    expect(page).toContain(settingsTable(SETTINGS));
  });
});

describe('live configuration', () => {
  it('applies the settings declared live, reports the others as needing a restart, and tells listeners', () => {
    const start = defaultConfig();
    const live = createLiveConfig(SETTINGS_TREE, start);
    const seen: string[] = [];
    live.onApply((config) => seen.push(config.logging.level));

    const next = defaultConfig();
    next.api.auth.apiKey = 'new-key';
    next.logging.level = 'debug';
    next.discovery.cacheTtlMs = 5_000;
    expect(live.apply(next)).toEqual({
      changed: ['api.auth.api_key', 'logging.level', 'discovery.cache_ttl'],
      applied: ['api.auth.api_key', 'logging.level'],
      restartRequired: ['discovery.cache_ttl'],
    });
    expect(live.current().api.auth.apiKey).toBe('new-key');
    expect(live.current().logging.level).toBe('debug');
    expect(live.current().discovery.cacheTtlMs).toBe(start.discovery.cacheTtlMs);
    expect(seen).toEqual(['debug']);

    // The same values again: nothing to apply, the restart-only change is still reported.
    expect(live.apply(next)).toEqual({
      changed: ['discovery.cache_ttl'],
      applied: [],
      restartRequired: ['discovery.cache_ttl'],
    });
    expect(seen).toEqual(['debug']);
  });

  it('declares liveness only where the running code reads the current value', () => {
    expect(SETTINGS.filter((s) => s.live).map((s) => s.key)).toEqual([
      'api.auth.api_key',
      'api.auth.skip_paths',
      'logging.level',
    ]);
  });

  it('reloads one at a time and applies nothing when the load fails', async () => {
    const live = createLiveConfig(SETTINGS_TREE, defaultConfig());
    const order: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((done) => {
      release = done;
    });
    let calls = 0;
    const reload = createConfigReloader({
      live,
      load: async () => {
        calls += 1;
        const call = calls;
        order.push(`start ${call}`);
        if (call === 1) await gate;
        order.push(`end ${call}`);
        if (call === 2)
          throw new ConfigError([{ key: 'logging.level', source: 'x', message: 'bad', line: 'bad' }]);
        const next = defaultConfig();
        next.logging.level = call === 1 ? 'warn' : 'error';
        return next;
      },
    });
    const first = reload();
    const second = reload();
    const third = reload();
    await Promise.resolve();
    expect(order).toEqual(['start 1']);
    release();
    expect((await first).applied).toEqual(['logging.level']);
    await expect(second).rejects.toBeInstanceOf(ConfigError);
    expect((await third).applied).toEqual(['logging.level']);
    expect(order).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(live.current().logging.level).toBe('error');
  });
});
