import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { isProblem } from '@switchyard/shared';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { expectDocumented } from './helpers/openapi.ts';

let handle: TestDatabase;
let server: Server;
let base: string;

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  server = createServer(createApp({ db: handle.db, log: silentLogger() }).callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  await handle.close();
});

describe('GET /api/v1/health', () => {
  it('answers a healthy report with a timed storage check', async () => {
    const response = await fetch(`${base}/api/v1/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ status: 'healthy', version: expect.any(String) });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(body.checks.storage).toMatchObject({ status: 'healthy', message: expect.any(String) });
    expect(typeof body.checks.storage.response_time).toBe('number');
    await expectDocumented(base, 'GET', '/api/v1/health', {
      status: response.status,
      headers: response.headers,
      body,
    });
  });

  it('answers 503 with an unhealthy storage check when the database is gone', async () => {
    const broken = await openMigratedTestDatabase();
    const app = createApp({ db: broken.db, log: silentLogger() });
    await broken.close();
    const local = createServer(app.callback());
    await new Promise<void>((done) => local.listen(0, '127.0.0.1', done));
    try {
      const { port } = local.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as any;
      expect(body.status).toBe('unhealthy');
      expect(body.checks.storage.status).toBe('unhealthy');
      await expectDocumented(`http://127.0.0.1:${port}`, 'GET', '/api/v1/health', {
        status: response.status,
        headers: response.headers,
        body,
      });
    } finally {
      await new Promise((done) => local.close(done));
    }
  });
});

describe('GET /api/v1/health with the connection pool exhausted', () => {
  it('answers 503 once the storage probe times out instead of waiting for a connection', async () => {
    const app = createApp({ db: handle.db, storageProbeTimeoutMs: 100, log: silentLogger() });
    const local = createServer(app.callback());
    await new Promise<void>((done) => local.listen(0, '127.0.0.1', done));
    // Every pooled connection (PGlite has one) sits in a transaction until released.
    const poolSize = (handle.db.client as { pool: { max: number } }).pool.max;
    let release = () => {};
    const released = new Promise<void>((done) => {
      release = done;
    });
    let holding = 0;
    let allHeld = () => {};
    const held = new Promise<void>((done) => {
      allHeld = done;
    });
    const holders = Array.from({ length: poolSize }, () =>
      handle.db.transaction(async (trx) => {
        await trx.raw('select 1');
        if (++holding === poolSize) allHeld();
        await released;
      }),
    );
    try {
      await held;
      const { port } = local.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as any;
      expect(body.checks.storage).toMatchObject({
        status: 'unhealthy',
        message: expect.stringMatching(/did not answer/),
      });
      expect(body.checks.cache.status).toBe('healthy');
    } finally {
      release();
      await Promise.all(holders);
      await new Promise((done) => local.close(done));
    }
    // With connections free again the database reports healthy.
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
  });
});

describe('unknown routes and methods', () => {
  it('answers 404 not_found with available_endpoints for an unknown path', async () => {
    const response = await fetch(`${base}/api/v1/nope`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const body = (await response.json()) as any;
    expect(isProblem(body)).toBe(true);
    expect(body).toMatchObject({ code: 'not_found', instance: '/api/v1/nope' });
    expect(body.available_endpoints['/api/v1/health']).toEqual(['GET']);
    await expectDocumented(base, 'GET', '/api/v1/nope', { status: 404, headers: response.headers, body });
  });

  it('answers 405 method_not_allowed with Allow for a known path', async () => {
    const response = await fetch(`${base}/api/v1/health`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    const body = (await response.json()) as any;
    expect(isProblem(body)).toBe(true);
    expect(body.code).toBe('method_not_allowed');
    await expectDocumented(base, 'DELETE', '/api/v1/health', {
      status: 405,
      headers: response.headers,
      body,
    });
  });
});
