import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig, STORED_CONFIG_NAME } from '../src/config.ts';
import { putStoredConfig } from '../src/modules/config-store/repository.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import { startExecutionAgent } from './helpers/execution-agent.ts';

/** The build `npm start` and the container run (turbo builds it before the tests). */
const SERVER_ENTRY = new URL('../dist/server.js', import.meta.url).pathname;

let dir: string;
/** A PostgreSQL database of this file's own when DATABASE_URL is set; embedded PGlite otherwise. */
let databaseUrl: string | undefined;
let dropDatabase: () => Promise<void> = async () => {};

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-server-'));
  const admin = process.env.DATABASE_URL;
  if (admin) {
    const name = `sy_server_${randomBytes(6).toString('hex')}`;
    await adminQuery(admin, `create database ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = async () => {
      await adminQuery(admin, `drop database if exists ${name} with (force)`);
    };
  }
});

afterAll(async () => {
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment a server of this file runs with: port 0, this file's database. */
function baseEnv(): NodeJS.ProcessEnv {
  return {
    CONTROL_PLANE_PORT: '0',
    SWITCHYARD_DATA_DIR: join(dir, 'data'),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
}

describe('startServer', () => {
  it('shuts down with an agent call still open, leaving the execution for recovery', async () => {
    const config = defaultConfig();
    config.server.port = 0;
    config.storage = { databaseUrl, dataDir: join(dir, 'data') };
    const running = await startServer({ config, log: silentLogger(), shutdownGraceMs: 200 });
    const agent = await startExecutionAgent({
      controlPlaneUrl: running.url,
      nodeId: `holder-${randomBytes(3).toString('hex')}`,
      reasoners: { hold: { kind: 'hang' } },
      heartbeatMs: 60_000,
    });
    try {
      await agent.register();
      const ack = await fetch(`${running.url}/api/v1/execute/async/${agent.nodeId}.hold`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"input":{}}',
      });
      const { execution_id: id } = (await ack.json()) as any;
      await expect.poll(() => agent.receivedCount(id), { timeout: 10_000 }).toBe(1);
      // The agent holds the call for ever (the async lane has no time limit); close() must not.
      await running.close();
      const db = await import('@switchyard/shared/db').then((m) =>
        m.openDatabase({
          url: databaseUrl,
          dataDir: databaseUrl ? undefined : join(dir, 'data', 'control-plane'),
        }),
      );
      try {
        const row = await db('executions').where({ execution_id: id }).first();
        // Still claimed and unacknowledged: the next replica recovers it (see executions.test.ts).
        expect(row).toMatchObject({ status: 'running', accepted_at: null });
        const lease = await db('control_plane_replicas').where({ replica_id: row.dispatched_by }).first();
        expect(new Date(lease.lease_expires_at).getTime()).toBeLessThanOrEqual(Date.now());
      } finally {
        // The other tests of this file share the database and expect no agents in it.
        await db('node_instances').where({ node_id: agent.nodeId }).delete();
        await db.destroy();
      }
    } finally {
      await agent.close();
    }
  });

  it('starts from a given config, answers on its URL and closes everything', async () => {
    const config = defaultConfig();
    config.server.port = 0;
    config.storage = { databaseUrl, dataDir: join(dir, 'data') };
    const running = await startServer({ config });
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = (await (await fetch(`${running.url}/api/v1/health`)).json()) as any;
      expect(health.checks.storage.status).toBe('healthy');
      expect(health.checks.cache.status).toBe('healthy');
      const discovery = (await (await fetch(`${running.url}/api/v1/discovery/capabilities`)).json()) as any;
      expect(discovery.total_agents).toBe(0);
    } finally {
      await running.close();
    }
    await expect(fetch(`${running.url}/api/v1/health`)).rejects.toThrow();
    // close() is idempotent.
    await running.close();
  });

  it('loads the config from the environment and applies the stored config with SERVICE_CONFIG_SOURCE=db', async () => {
    const first = await startServer({ env: baseEnv(), log: silentLogger() });
    await putStoredConfig(first.db, {
      name: STORED_CONFIG_NAME,
      body: 'api:\n  auth:\n    api_key: from-the-database\ndiscovery:\n  cache_ttl: 5s\nstorage:\n  data_dir: /nowhere\n',
    });
    await first.close();

    const lines: string[] = [];
    const running = await startServer({
      env: { ...baseEnv(), SERVICE_CONFIG_SOURCE: 'db' },
      log: pino({}, { write: (line: string) => void lines.push(JSON.parse(line).msg) }),
    });
    try {
      expect(running.config.configSource).toBe('db');
      expect(running.config.discovery.cacheTtlMs).toBe(5_000);
      expect(running.config.storage.dataDir).toBe(join(dir, 'data'));
      expect(lines.join('\n')).toMatch(/ignored storage\.data_dir/);
      const denied = await fetch(`${running.url}/api/v1/discovery/capabilities`);
      expect(denied.status).toBe(401);
      const allowed = await fetch(`${running.url}/api/v1/discovery/capabilities`, {
        headers: { 'X-API-Key': 'from-the-database' },
      });
      expect(allowed.status).toBe(200);
    } finally {
      await running.close();
    }
  });

  it('shuts down gracefully: ends event streams, lets requests in flight finish, then closes the database', async () => {
    const running = await startServer({ env: baseEnv(), log: silentLogger(), shutdownGraceMs: 30_000 });
    const url = new URL(running.url);
    // An event stream that stays open until the server ends it.
    const stream = await fetch(`${running.url}/api/ui/v1/nodes/events`);
    const reader = stream.body!.getReader();
    await reader.read();
    // A registration whose body is still arriving when close() is called.
    const body = JSON.stringify({
      id: `graceful-${randomBytes(4).toString('hex')}`,
      base_url: 'http://127.0.0.1:9',
    });
    const answered = new Promise<{ status: number; text: string }>((done, fail) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/api/v1/nodes/register',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => done({ status: res.statusCode ?? 0, text }));
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      // Once the server has the request, start closing, then send the rest of the body.
      running.server.once('request', () => {
        closing = running.close();
        req.end(body.slice(10));
      });
      req.write(body.slice(0, 10));
    });
    let closing: Promise<void> | undefined;
    // The stream ends cleanly (no reset) rather than being cut.
    let ended = false;
    while (!ended) ended = (await reader.read()).done;
    const registered = await answered;
    expect(registered.status).toBe(201);
    expect(JSON.parse(registered.text).lifecycle_status).toBe('starting');
    await closing;
    await expect(fetch(`${running.url}/api/v1/health`)).rejects.toThrow();
  });

  // Regression: closeAllConnections() does not see the connections Node handed over for an
  // upgrade, and server.close() waits for them: one whose client never read its answer held the
  // shutdown forever, past the grace period.
  it('cuts a connection answered through an upgrade that its client does not read once the grace period is over', async () => {
    const running = await startServer({ env: baseEnv(), log: silentLogger(), shutdownGraceMs: 500 });
    const headers = { 'content-type': 'application/json' };
    const scopeId = `grace-${randomBytes(4).toString('hex')}`;
    for (let n = 0; n < 12; n++) {
      const body = JSON.stringify({
        key: `big-${n}`,
        data: 'x'.repeat(900_000),
        scope: 'session',
        scope_id: scopeId,
      });
      const answer = await fetch(`${running.url}/api/v1/memory/set`, { method: 'POST', headers, body });
      expect(answer.status).toBe(200);
    }
    // The history of those changes (about 10 MB), asked for with an upgrade, and never read.
    const url = new URL(running.url);
    const client = connect(Number(url.port), url.hostname);
    client.on('error', () => {});
    client.pause();
    const answered = new Promise<void>((done) => running.server.once('upgrade', () => done()));
    client.write(
      `GET /api/v1/memory/events/history?scope_id=${scopeId} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    await answered;
    await new Promise((wake) => setTimeout(wake, 1_000));
    const started = Date.now();
    const closed = await Promise.race([
      running.close().then(() => true),
      new Promise<false>((done) => setTimeout(() => done(false), 10_000)),
    ]);
    client.destroy();
    if (!closed) await running.close();
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses to start with an invalid configuration, naming the key and source', async () => {
    const filePath = join(dir, 'bad.yaml');
    writeFileSync(filePath, 'node_health:\n  check_interval: abc\n');
    const failure = await startServer({ env: baseEnv(), filePath, log: silentLogger() }).catch(
      (error) => error,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual([
      `node_health.check_interval: "abc" is not a duration (use 15s, 5m) — from file ${filePath}`,
    ]);
  });

  it('fails with EADDRINUSE when the port is taken', async () => {
    const holder = await startServer({ env: baseEnv(), log: silentLogger() });
    const port = new URL(holder.url).port;
    try {
      const failure = await startServer({
        env: { ...baseEnv(), SWITCHYARD_DATA_DIR: join(dir, 'data-second'), CONTROL_PLANE_PORT: port },
        log: silentLogger(),
      }).catch((error) => error);
      expect((failure as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    } finally {
      await holder.close();
    }
  });
});

/** A raw HTTP/1.1 exchange: the bytes sent, and everything answered until the server closes. */
function rawExchange(url: string, bytes: string): Promise<{ status: number; head: string; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', fail);
    socket.on('close', () => {
      const split = answer.indexOf('\r\n\r\n');
      const head = answer.slice(0, split);
      const text = answer.slice(split + 4);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // a bare answer; kept as text so the assertion shows it
      }
      done({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]), head, body });
    });
    socket.write(bytes);
    socket.setTimeout(10_000, () => socket.destroy(new Error('the server neither answered nor closed')));
  });
}

function headerOf(head: string, name: string): string | undefined {
  return new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim();
}

describe('startServer: requests Node itself rejects', () => {
  let running: RunningServer;
  const lines: Array<{ level: number; msg: string; [field: string]: unknown }> = [];

  beforeAll(async () => {
    running = await startServer({
      env: { ...baseEnv(), SWITCHYARD_DATA_DIR: join(dir, 'data-client-errors') },
      log: pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
      headersTimeoutMs: 300,
    });
  });

  afterAll(async () => {
    await running?.close();
  });

  function expectProblem(
    answer: { status: number; head: string; body: any },
    status: number,
    detail: RegExp,
  ) {
    expect(answer.status).toBe(status);
    expect(headerOf(answer.head, 'content-type')).toMatch(/^application\/problem\+json/);
    expect(headerOf(answer.head, 'x-request-id')).toMatch(/^req_/);
    expect(answer.body).toMatchObject({
      status,
      // 408 and 431 have no code of their own in the catalogue; the status keeps what happened.
      code: 'invalid_request',
      detail: expect.stringMatching(detail),
      documentation_url: expect.stringMatching(/\/docs\/reference\/errors#invalid_request$/),
    });
  }

  it('answers an HTTP/1.1 request without Host with a 400 problem document', async () => {
    const answer = await rawExchange(running.url, 'GET /api/v1/health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectProblem(answer, 400, /no Host header/);
  });

  it('answers a request with two Host headers with a 400 problem document and closes', async () => {
    const answer = await rawExchange(
      running.url,
      'GET /api/v1/health HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n',
    );
    expectProblem(answer, 400, /more than one Host/);
    expect(headerOf(answer.head, 'connection')).toBe('close');
  });

  it('still serves an HTTP/1.0 request without Host, which HTTP/1.0 allows', async () => {
    const answer = await rawExchange(running.url, 'GET /api/v1/health HTTP/1.0\r\n\r\n');
    expect(answer.status).toBe(200);
  });

  it('answers bad framing (an invalid Content-Length, a garbage request line) with 400 problem documents', async () => {
    const length = await rawExchange(
      running.url,
      'POST /api/v1/nodes/register HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n{}',
    );
    expectProblem(length, 400, /could not be parsed as HTTP\/1\.1/);
    expect(length.body.instance).toBe('/api/v1/nodes/register');
    const garbage = await rawExchange(running.url, 'HELLO THERE\r\n\r\n');
    expectProblem(garbage, 400, /could not be parsed/);
  });

  it('answers headers over the size limit with 431', async () => {
    const answer = await rawExchange(
      running.url,
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectProblem(answer, 431, /larger than this server accepts/);
  });

  it('answers a request head that does not arrive in time with 408', async () => {
    const answer = await rawExchange(running.url, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n');
    expectProblem(answer, 408, /did not arrive in time/);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'client error answered with 408',
        status: 408,
        req_id: expect.any(String),
      }),
    );
  });

  it('logs an upload the client abandons without an error', async () => {
    const { hostname, port } = new URL(running.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    const received = new Promise<void>((done) => running.server.once('request', () => done()));
    const before = lines.length;
    socket.write(
      'POST /api/v1/nodes/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000\r\n\r\n{"id":"half',
    );
    await received;
    // Long enough for the body reader to be waiting for the rest, then the client gives up.
    await new Promise((done) => setTimeout(done, 50));
    socket.end();
    socket.resume();
    await new Promise((done) => socket.once('close', done));
    await new Promise((done) => setTimeout(done, 100));
    const logged = lines.slice(before);
    expect(logged.filter((line) => line.level >= 40 || line.err !== undefined)).toEqual([]);
    // The request line says the client went away; Koa never sent an answer of its own.
    expect(logged.find((line) => line.msg === 'request')).toMatchObject({
      path: '/api/v1/nodes/register',
      aborted: true,
    });
  });
});

interface ChildRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** The complete JSON log lines written so far. */
function logLines(stdout: string): Array<{ msg: string; level: number; [field: string]: unknown }> {
  return stdout
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line));
}

/** Runs the build as a real process; `whenListening` gets the URL once it prints it. */
function runServerProcess(env: NodeJS.ProcessEnv, whenListening?: (url: string, stop: () => void) => void) {
  return new Promise<ChildRun>((done, fail) => {
    const child = spawn(process.execPath, ['--enable-source-maps', SERVER_ENTRY], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let announced = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const listening = logLines(stdout).find((line) => line.msg.startsWith('listening on'));
      if (listening && !announced && whenListening) {
        announced = true;
        whenListening(listening.url as string, () => child.kill('SIGTERM'));
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('exit', (exitCode) => done({ exitCode, stdout, stderr }));
  });
}

describe('the built server (dist/server.js) as a process', () => {
  it('prints its URL, serves, and exits 0 on SIGTERM after closing', async () => {
    let health: number | undefined;
    let missing: number | undefined;
    const run = await runServerProcess(baseEnv(), (url, stop) => {
      fetch(`${url}/api/v1/health`)
        .then((response) => {
          health = response.status;
          return fetch(`${url}/api/v1/nodes/no-such-node`);
        })
        .then((response) => {
          missing = response.status;
        })
        .finally(stop);
    });
    expect(run.stderr).toBe('');
    expect(health).toBe(200);
    expect(missing).toBe(404);
    // Off a terminal the log is JSON lines: every line parses, with a level, a time and a message.
    const lines = logLines(run.stdout);
    for (const line of lines)
      expect(line).toMatchObject({ level: expect.any(Number), time: expect.any(Number) });
    const listening = lines.find((line) => line.msg.startsWith('listening on'));
    expect(listening).toMatchObject({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      api_key: 'off',
    });
    expect(lines.some((line) => line.msg === 'SIGTERM: shutting down')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'stopped' });
    // One line per request, carrying the request id the response echoed; a health check that
    // succeeds is routine and logged at debug, below the default level.
    expect(lines.filter((line) => line.msg === 'request')).toEqual([
      expect.objectContaining({
        level: 30,
        method: 'GET',
        path: '/api/v1/nodes/no-such-node',
        status: 404,
        req_id: expect.stringMatching(/^req_/),
      }),
    ]);
    expect(run.exitCode).toBe(0);
  });

  it('exits 1 with every configuration problem listed', async () => {
    const run = await runServerProcess({
      ...baseEnv(),
      CONTROL_PLANE_PORT: 'eighty',
      SWITCHYARD_DISCOVERY_CACHE_TTL: 'x',
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('failed to start: invalid configuration');
    expect(run.stderr).toContain(
      'server.port: "eighty" is not a whole number from 0 to 65535 — from environment variable CONTROL_PLANE_PORT',
    );
    expect(run.stderr).toContain('discovery.cache_ttl: "x" is not a duration');
  });
});
