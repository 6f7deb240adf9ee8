import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@switchyard/shared/db';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STORED_CONFIG_NAME } from '../src/config.ts';
import { putStoredConfig } from '../src/modules/config-store/index.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import { seedDataDir } from './helpers/database.ts';
import { startExecutionAgent } from './helpers/execution-agent.ts';

let dir: string;
let scratch: ScratchDatabase | undefined;
const running: RunningServer[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-config-reload-'));
  if (process.env.DATABASE_URL)
    scratch = await createScratchDatabase(process.env.DATABASE_URL, 'sy_config_reload');
});

afterEach(async () => {
  // Replicas of the PostgreSQL tests share one database: no stored config outlives its test.
  const servers = running.splice(0);
  if (servers[0]) {
    await servers[0].db('configs').delete();
    await servers[0].db('config_versions').delete();
  }
  for (const server of servers) await server.close();
});

afterAll(async () => {
  await scratch?.drop();
  rmSync(dir, { recursive: true, force: true });
});

let dataDirs = 0;

/** A config file and the environment of a server that reads the stored config (config_source db). */
function environment(file: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const path = join(dir, `switchyard-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, file);
  dataDirs += 1;
  return {
    CONTROL_PLANE_PORT: '0',
    SERVICE_CONFIG_SOURCE: 'db',
    SERVICE_CONFIG_FILE: path,
    // Embedded: a data directory per test; PostgreSQL: one scratch database, as replicas share it.
    SWITCHYARD_DATA_DIR: join(dir, `data-${dataDirs}`),
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...extra,
  };
}

async function start(
  env: NodeJS.ProcessEnv,
): Promise<RunningServer & { lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  if (!env.DATABASE_URL && env.SWITCHYARD_DATA_DIR) await seedDataDir(env.SWITCHYARD_DATA_DIR);
  const server = await startServer({
    env,
    log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
  });
  running.push(server);
  return Object.assign(server, { lines });
}

async function send(base: string, method: string, path: string, key?: string, body?: string) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body !== undefined ? { 'content-type': 'text/yaml' } : {}),
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const FILE = 'api:\n  auth:\n    api_key: from-file\ndiscovery:\n  cache_ttl: 7s\n';

describe('POST /api/v1/configs/reload with SERVICE_CONFIG_SOURCE=db', () => {
  it('applies a new API key, skip paths and log level at once and reports the rest as needing a restart', async () => {
    const server = await start(environment(FILE));
    const { url } = server;
    expect((await send(url, 'GET', '/api/v1/configs')).status).toBe(401);
    expect((await send(url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);

    const stored = [
      'api:',
      '  auth:',
      '    api_key: from-db',
      '    skip_paths: [/api/v1/discovery/*]',
      'logging:',
      '  level: warn',
      'discovery:',
      '  cache_ttl: 9s',
      '',
    ].join('\n');
    const put = await send(url, 'PUT', `/api/v1/configs/${STORED_CONFIG_NAME}`, 'from-file', stored);
    expect(put.status).toBe(201);
    // Stored is not applied: the old key still opens the API until a reload.
    expect((await send(url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);

    const reload = await send(url, 'POST', '/api/v1/configs/reload', 'from-file');
    expect(reload.status).toBe(200);
    expect(reload.body).toEqual({
      reloaded_at: expect.stringMatching(/Z$/),
      source: 'db',
      changed: ['api.auth.api_key', 'api.auth.skip_paths', 'logging.level', 'discovery.cache_ttl'],
      applied: ['api.auth.api_key', 'api.auth.skip_paths', 'logging.level'],
      restart_required: ['discovery.cache_ttl'],
      replicas_notified: true,
    });
    // No value is reported: the key is a secret.
    expect(JSON.stringify(reload.body)).not.toContain('from-db');

    expect((await send(url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(401);
    expect((await send(url, 'GET', '/api/v1/configs', 'from-db')).status).toBe(200);
    expect((await send(url, 'GET', '/api/v1/discovery/capabilities')).status).toBe(200);
    expect(server.log.level).toBe('warn');

    // A second reload with nothing new changes nothing, but still names what awaits a restart.
    const again = await send(url, 'POST', '/api/v1/configs/reload', 'from-db');
    expect(again.body).toMatchObject({
      changed: ['discovery.cache_ttl'],
      applied: [],
      restart_required: ['discovery.cache_ttl'],
    });

    // Deleting the stored config and reloading falls back to the file.
    expect((await send(url, 'DELETE', `/api/v1/configs/${STORED_CONFIG_NAME}`, 'from-db')).status).toBe(204);
    const back = await send(url, 'POST', '/api/v1/configs/reload', 'from-db');
    expect(back.body).toMatchObject({
      changed: ['api.auth.api_key', 'api.auth.skip_paths', 'logging.level'],
      applied: ['api.auth.api_key', 'api.auth.skip_paths', 'logging.level'],
      restart_required: [],
    });
    expect((await send(url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);
    expect((await send(url, 'GET', '/api/v1/discovery/capabilities')).status).toBe(401);
    expect(server.log.level).toBe('info');
  });

  it('sends agents the reloaded API key at once, as it asks it of them', async () => {
    const server = await start(environment(FILE));
    const agent = await startExecutionAgent({
      controlPlaneUrl: server.url,
      nodeId: `reload-agent-${process.pid}`,
      apiKey: 'from-file',
      reasoners: { work: { kind: 'answer' } },
      heartbeatMs: 60_000,
    });
    try {
      await agent.register();
      const execute = (key: string) =>
        fetch(`${server.url}/api/v1/execute/${agent.nodeId}.work`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ input: {} }),
        });
      expect((await execute('from-file')).status).toBe(200);
      expect(agent.calls.at(-1)?.headers['x-api-key']).toBe('from-file');

      const stored = 'api:\n  auth:\n    api_key: from-db\n';
      expect(
        (await send(server.url, 'PUT', `/api/v1/configs/${STORED_CONFIG_NAME}`, 'from-file', stored)).status,
      ).toBe(201);
      expect((await send(server.url, 'POST', '/api/v1/configs/reload', 'from-file')).status).toBe(200);

      expect((await execute('from-db')).status).toBe(200);
      expect(agent.calls.at(-1)?.headers['x-api-key']).toBe('from-db');
    } finally {
      await agent.close();
    }
  });

  it('refuses an invalid stored config with each error naming key and source, and keeps the running config', async () => {
    const server = await start(environment(FILE));
    const { url } = server;
    // Written past the API's checks, as an older version or a direct database edit could have.
    await putStoredConfig(server.db, {
      name: STORED_CONFIG_NAME,
      body: 'api:\n  auth:\n    api_key: from-db\nnode_health:\n  check_interval: soon\nserver:\n  prot: 1\n',
    });
    const reload = await send(url, 'POST', '/api/v1/configs/reload', 'from-file');
    expect(reload.status).toBe(400);
    expect(reload.body.code).toBe('invalid_request');
    const source = `database config "${STORED_CONFIG_NAME}"`;
    expect(reload.body.errors).toEqual([
      { field: 'server.prot', key: 'server.prot', source, message: expect.stringMatching(/unknown setting/) },
      {
        field: 'node_health.check_interval',
        key: 'node_health.check_interval',
        source,
        message: expect.stringMatching(/duration/),
      },
    ]);
    expect(reload.body.detail).toMatch(/running one stays/);
    // Nothing changed: the file's key still opens the API, the stored one does not.
    expect((await send(url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);
    expect((await send(url, 'GET', '/api/v1/configs', 'from-db')).status).toBe(401);

    // A bad choice is refused the same way.
    await putStoredConfig(server.db, { name: STORED_CONFIG_NAME, body: 'logging:\n  level: loud\n' });
    const levelBad = await send(url, 'POST', '/api/v1/configs/reload', 'from-file');
    expect(levelBad.status).toBe(400);
    expect(levelBad.body.errors).toEqual([
      { field: 'logging.level', key: 'logging.level', source, message: expect.any(String) },
    ]);
  });

  it('keeps the environment above the stored config and the stored config above the file', async () => {
    const server = await start(environment(FILE, { SERVICE_API_KEY: 'from-env' }));
    const { url } = server;
    const put = await send(
      url,
      'PUT',
      `/api/v1/configs/${STORED_CONFIG_NAME}`,
      'from-env',
      'api:\n  auth:\n    api_key: from-db\n    skip_paths: [/api/v1/discovery/*]\n',
    );
    expect(put.status).toBe(201);
    const reload = await send(url, 'POST', '/api/v1/configs/reload', 'from-env');
    expect(reload.status).toBe(200);
    // The environment's key wins over the stored one; the stored skip paths win over the file's.
    expect(reload.body.changed).toEqual(['api.auth.skip_paths']);
    expect((await send(url, 'GET', '/api/v1/configs', 'from-db')).status).toBe(401);
    expect((await send(url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(401);
    expect((await send(url, 'GET', '/api/v1/configs', 'from-env')).status).toBe(200);
    expect((await send(url, 'GET', '/api/v1/discovery/capabilities')).status).toBe(200);
  });

  it('answers 503 on a server started with SERVICE_CONFIG_SOURCE=file, even with a stored config', async () => {
    const server = await start(environment(FILE, { SERVICE_CONFIG_SOURCE: 'file' }));
    await putStoredConfig(server.db, {
      name: STORED_CONFIG_NAME,
      body: 'api:\n  auth:\n    api_key: from-db\n',
    });
    const reload = await send(server.url, 'POST', '/api/v1/configs/reload', 'from-file');
    expect(reload.status).toBe(503);
    expect(reload.body.code).toBe('service_unavailable');
    expect((await send(server.url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);
  });
});

describe.runIf(process.env.DATABASE_URL)('reload across replicas (PostgreSQL)', () => {
  it('reaches the other replica over the event bus', async () => {
    const env = environment(FILE);
    const first = await start(env);
    const second = await start({ ...env, SWITCHYARD_DATA_DIR: join(dir, 'unused') });
    const put = await send(
      first.url,
      'PUT',
      `/api/v1/configs/${STORED_CONFIG_NAME}`,
      'from-file',
      'api:\n  auth:\n    api_key: rotated\n',
    );
    expect(put.status).toBe(201);
    // Stored but not reloaded: the second replica still takes the file's key.
    expect((await send(second.url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);

    const reload = await send(first.url, 'POST', '/api/v1/configs/reload', 'from-file');
    expect(reload.status).toBe(200);
    expect(reload.body.applied).toEqual(['api.auth.api_key']);

    // The second replica applies it when the broadcast arrives: wait for its log line, then check.
    const deadline = Date.now() + 30_000;
    while (!second.lines.some((line) => line.msg === 'config reloaded by another replica')) {
      if (Date.now() > deadline)
        throw new Error(`no reload on the second replica: ${JSON.stringify(second.lines)}`);
      await new Promise((done) => setTimeout(done, 50));
    }
    expect((await send(second.url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(401);
    expect((await send(second.url, 'GET', '/api/v1/configs', 'rotated')).status).toBe(200);
    // The first replica applied it once, not again on its own broadcast.
    expect(first.lines.some((line) => line.msg === 'config reloaded by another replica')).toBe(false);
  });

  it('gives concurrent writers on two replicas distinct, gapless versions', async () => {
    const env = environment(FILE);
    const first = await start(env);
    const second = await start(env);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(i % 2 ? first.url : second.url, 'PUT', '/api/v1/configs/shared', 'from-file', `n: ${i}\n`).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    const versions = await send(first.url, 'GET', '/api/v1/configs/shared/versions', 'from-file');
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });
});
