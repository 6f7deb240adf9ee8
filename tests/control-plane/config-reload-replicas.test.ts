/**
 * Stored configuration: a hot reload takes effect the same on every replica. PostgreSQL only:
 * PGlite's files belong to a single process, so there is no second replica to run.
 *
 * Two real control-plane processes (A and B) on one throwaway database, both started with
 * SERVICE_CONFIG_SOURCE=db and the API key from a config file. A new key is stored through A and
 * reloaded on A only; B must take the new key (and refuse the old one) without being asked,
 * because A broadcast the reload. A stored config that fails its checks is refused by a reload on
 * B, and both replicas keep their key.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);

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

describe.runIf(POSTGRES)('config reload across two control-plane processes', () => {
  let dir: string;
  let database: ThrowawayDatabase;
  let a: ControlPlaneProcess;
  let b: ControlPlaneProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-config-replicas-'));
    const file = join(dir, 'switchyard.yaml');
    writeFileSync(file, 'api:\n  auth:\n    api_key: from-file\n');
    database = await throwawayDatabase('sy_config_replicas');
    const env = { SERVICE_CONFIG_SOURCE: 'db', SERVICE_CONFIG_FILE: file };
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    a = await startControlPlaneProcess({ dir: join(dir, 'a'), databaseUrl: database.url, env });
    b = await startControlPlaneProcess({ dir: join(dir, 'b'), databaseUrl: database.url, env });
  }, 180_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('applies a reload asked of one replica on the other', async () => {
    const stored = await send(
      a.url,
      'PUT',
      '/api/v1/configs/control-plane',
      'from-file',
      'api:\n  auth:\n    api_key: rotated\n',
    );
    expect(stored.status).toBe(201);
    // Stored, not applied: B still takes the file's key.
    expect((await send(b.url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(200);

    const reload = await send(a.url, 'POST', '/api/v1/configs/reload', 'from-file');
    expect(reload.status).toBe(200);
    expect(reload.body.applied).toEqual(['api.auth.api_key']);
    expect((await send(a.url, 'GET', '/api/v1/configs', 'rotated')).status).toBe(200);
    expect((await send(a.url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(401);

    await eventually(
      'replica B takes the rotated key',
      async () =>
        (await send(b.url, 'GET', '/api/v1/configs', 'rotated')).status === 200 ? true : undefined,
      () => b.output(),
    );
    expect((await send(b.url, 'GET', '/api/v1/configs', 'from-file')).status).toBe(401);
  });

  it('refuses a reload from an invalid stored config, and both replicas keep the running key', async () => {
    const refused = await send(
      a.url,
      'PUT',
      '/api/v1/configs/control-plane',
      'rotated',
      'api:\n  auth:\n    api_kee: x\n',
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ key: 'api.auth.api_kee', source: 'request body' }),
    ]);
    // The API checks what it stores, so an invalid stored text can only be an older or hand-made
    // row: written here straight into the database.
    const db = await openDatabase({ url: database.url, poolMax: 1 });
    try {
      await db('configs')
        .where({ name: 'control-plane' })
        .update({ body: 'api:\n  auth:\n    api_key: other\nnode_health:\n  check_interval: soon\n' });
    } finally {
      await db.destroy();
    }
    const reload = await send(b.url, 'POST', '/api/v1/configs/reload', 'rotated');
    expect(reload.status).toBe(400);
    expect(reload.body.errors).toEqual([
      expect.objectContaining({
        key: 'node_health.check_interval',
        source: 'database config "control-plane"',
      }),
    ]);
    for (const replica of [a, b]) {
      expect((await send(replica.url, 'GET', '/api/v1/configs', 'rotated')).status).toBe(200);
      expect((await send(replica.url, 'GET', '/api/v1/configs', 'other')).status).toBe(401);
    }
  });
});
