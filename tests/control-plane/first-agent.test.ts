/**
 * Issue 5, "done when": an agent written as in the docs' first-agent page
 * (examples/first-agent/agent.mjs, run unmodified as a child process) registers with the real
 * control-plane server, turns ready, shows in discovery in all three formats, and goes offline
 * when its process dies. The example agent's health endpoint cannot fail, so the degraded path
 * uses a second agent of our own whose /health answers 500, against the same server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningServer, startServer } from '@switchyard/control-plane/server';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AGENT_SCRIPT = fileURLToPath(new URL('../../examples/first-agent/agent.mjs', import.meta.url));
const AGENT_ID = `first-agent-${randomBytes(3).toString('hex')}`;

let running: RunningServer;
let dataDir: string;
let agent: ChildProcess;
let agentLog = '';
let dropDatabase: (() => Promise<void>) | undefined;
const events: Array<{ event: string; data: any }> = [];
let stopStream: (() => void) | undefined;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** A throwaway PostgreSQL database when DATABASE_URL is set (the embedded database otherwise). */
async function databaseUrlForRun(): Promise<string | undefined> {
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  const name = `sy_first_agent_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolMax: 1 });
  await admin.raw(`create database ${name}`);
  await admin.destroy();
  dropDatabase = async () => {
    const cleanup = await openDatabase({ url, poolMax: 1 });
    await cleanup.raw(`drop database if exists ${name} with (force)`);
    await cleanup.destroy();
  };
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}

async function getJson(path: string): Promise<any> {
  const response = await fetch(`${running.url}${path}`);
  return { status: response.status, body: await response.json() };
}

/** Polls until `check` returns a value, or fails after `timeoutMs` with what was last seen. */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms (${String(last ?? '')})\n${agentLog}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function statusOf(id: string): Promise<string | undefined> {
  const { status, body } = await getJson(`/api/v1/nodes/${id}`);
  return status === 200 ? body.lifecycle_status : undefined;
}

async function openNodeStream(): Promise<void> {
  const controller = new AbortController();
  stopStream = () => controller.abort();
  const response = await fetch(`${running.url}/api/ui/v1/nodes/events`, { signal: controller.signal });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  void (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted at the end of the run
    }
  })();
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sy-first-agent-'));
  const databaseUrl = await databaseUrlForRun();
  running = await startServer({
    // Only these settings: a developer's SERVICE_API_KEY or SERVICE_CONFIG_FILE must not leak in
    // (tests/ has no switchyard.yaml, so no file layer applies).
    env: {
      CONTROL_PLANE_PORT: '0',
      CONTROL_PLANE_HOST: '127.0.0.1',
      SWITCHYARD_DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      // The example heartbeats every 5 s, so the TTL stays above that; everything else is short.
      SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL: '8s',
      SWITCHYARD_NODE_LIFECYCLE_SWEEP_INTERVAL: '250ms',
      SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL: '300ms',
      SWITCHYARD_NODE_HEALTH_CHECK_TIMEOUT: '1s',
      SWITCHYARD_NODE_HEALTH_RECOVERY_DEBOUNCE: '600ms',
    },
    log: () => {},
  });
  await openNodeStream();
  const port = await freePort();
  agent = spawn(process.execPath, [AGENT_SCRIPT], {
    env: { PATH: process.env.PATH, CONTROL_PLANE_URL: running.url, AGENT_PORT: String(port), AGENT_ID },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agent.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    agentLog += chunk;
  });
  agent.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    agentLog += chunk;
  });
});

afterAll(async () => {
  stopStream?.();
  if (agent && agent.exitCode === null && agent.signalCode === null) {
    const exited = new Promise((done) => agent.once('exit', done));
    agent.kill('SIGKILL');
    await exited;
  }
  await running?.close();
  await dropDatabase?.();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the first agent from the docs', () => {
  it('registers and turns ready', async () => {
    await eventually('agent ready', async () => ((await statusOf(AGENT_ID)) === 'ready' ? true : undefined));
    const { body } = await getJson(`/api/v1/nodes/${AGENT_ID}`);
    expect(body).toMatchObject({
      id: AGENT_ID,
      version: '1.0.0',
      deployment_type: 'long_running',
      routable: true,
    });
    expect(body.reasoners.map((r: any) => r.id)).toEqual(['summarize']);
    expect(body.skills.map((s: any) => s.id)).toEqual(['word_count']);
    const registered = events.find((e) => e.event === 'node.registered' && e.data.node_id === AGENT_ID);
    expect(registered?.data).toMatchObject({ version: '1.0.0' });
    expect(
      events.some(
        (e) =>
          e.event === 'node.status_changed' && e.data.node_id === AGENT_ID && e.data.new_status === 'ready',
      ),
    ).toBe(true);
  });

  it('shows in discovery as json, xml and compact', async () => {
    const json = await eventually('json discovery', async () => {
      const { status, body } = await getJson(`/api/v1/discovery/capabilities?agent=${AGENT_ID}`);
      return status === 200 && body.capabilities?.length === 1 ? body : undefined;
    });
    expect(json.capabilities[0]).toMatchObject({ agent_id: AGENT_ID, version: '1.0.0' });
    expect(json.capabilities[0].reasoners[0]).toMatchObject({
      id: 'summarize',
      invocation_target: `${AGENT_ID}.summarize`,
    });
    expect(json.capabilities[0].skills[0].id).toBe('word_count');

    const compact = await getJson(`/api/v1/discovery/capabilities?agent=${AGENT_ID}&format=compact`);
    expect(compact.status).toBe(200);
    expect(compact.body.reasoners).toContainEqual(
      expect.objectContaining({ id: 'summarize', agent_id: AGENT_ID, target: `${AGENT_ID}.summarize` }),
    );
    expect(compact.body.skills).toContainEqual(
      expect.objectContaining({ id: 'word_count', agent_id: AGENT_ID }),
    );

    const xmlResponse = await fetch(
      `${running.url}/api/v1/discovery/capabilities?agent=${AGENT_ID}&format=xml`,
    );
    expect(xmlResponse.status).toBe(200);
    expect(xmlResponse.headers.get('content-type')).toMatch(/xml/);
    const xml = await xmlResponse.text();
    expect(xml).toMatch(/<discovery[\s>]/);
    expect(xml).toMatch(new RegExp(`<agent [^>]*id="${AGENT_ID}"`));
    expect(xml).toMatch(
      new RegExp(
        `<reasoner [^>]*id="summarize"[^>]*target="${AGENT_ID}.summarize"|<reasoner [^>]*target="${AGENT_ID}.summarize"[^>]*id="summarize"`,
      ),
    );
    expect(xml).toMatch(/<skill [^>]*id="word_count"/);
  });

  it('turns degraded when its health endpoint fails, and ready again when it recovers', async () => {
    // The example cannot fail its health check, so an agent of our own does, on the same server.
    let healthy = false;
    const sick: Server = createServer((req, res) => {
      const ok = req.url === '/health' && healthy;
      res
        .writeHead(ok ? 200 : 500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: ok ? 'ok' : 'error' }));
    });
    await new Promise<void>((done) => sick.listen(0, '127.0.0.1', done));
    const sickId = `${AGENT_ID}-sick`;
    const post = (path: string, body: unknown) =>
      fetch(`${running.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    const beats = setInterval(
      () => void post(`/api/v1/nodes/${sickId}/heartbeat`, { status: 'ready' }).catch(() => {}),
      1000,
    );
    try {
      const url = `http://127.0.0.1:${(sick.address() as { port: number }).port}`;
      await post('/api/v1/nodes/register', { id: sickId, version: '1.0.0', base_url: url });
      await post(`/api/v1/nodes/${sickId}/lifecycle/status`, { status: 'ready' });
      await eventually('sick agent degraded', async () =>
        (await statusOf(sickId)) === 'degraded' ? true : undefined,
      );
      const { body } = await getJson(`/api/v1/nodes/${sickId}/status`);
      expect(body.health).toMatchObject({ last_check_ok: false, last_check_status_code: 500 });
      expect(body.instances[0].status_reason).toBe('health_check_failed');
      healthy = true;
      await eventually('sick agent recovered', async () =>
        (await statusOf(sickId)) === 'ready' ? true : undefined,
      );
    } finally {
      clearInterval(beats);
      sick.closeAllConnections();
      await new Promise((done) => sick.close(done));
    }
  });

  it('goes offline when its process dies', async () => {
    const exited = new Promise((done) => agent.once('exit', done));
    agent.kill('SIGKILL');
    await exited;
    await eventually('agent offline', async () =>
      (await statusOf(AGENT_ID)) === 'offline' ? true : undefined,
    );
    const { body } = await getJson(`/api/v1/nodes/${AGENT_ID}`);
    expect(body.status_reason).toBe('heartbeat_expired');
    expect(
      events.some(
        (e) =>
          e.event === 'node.status_changed' && e.data.node_id === AGENT_ID && e.data.new_status === 'offline',
      ),
    ).toBe(true);
  });
});
