/**
 * The first-agent page works as written: an agent written as in the docs' first-agent page
 * (examples/first-agent/agent.mjs, run unmodified as a child process) registers with the real
 * control-plane server, turns ready, shows in discovery in all three formats, and goes offline
 * when its process dies. The example agent's health endpoint cannot fail, so the degraded path
 * uses a second agent of our own whose /health answers 500, against the same server.
 *
 * Each test starts agents of its own (ids never repeat) and waits for them to turn ready as a
 * stated precondition, so one failing behaviour does not take the others down with it.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningServer, startServer } from '@switchyard/control-plane/server';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { seedDataDir } from '../support/data-dir.ts';
import { eventually, GiveUp } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const AGENT_SCRIPT = fileURLToPath(new URL('../../examples/first-agent/agent.mjs', import.meta.url));
const RUN_ID = randomBytes(3).toString('hex');

let running: RunningServer;
let dataDir: string;
let database: ThrowawayDatabase | undefined;
const events: Array<{ event: string; data: any }> = [];
let stopStream: (() => void) | undefined;
/** Agents started by the current test; afterEach kills them. */
const agents: RunningProcess[] = [];
let agentCount = 0;

async function getJson(path: string): Promise<any> {
  const response = await fetch(`${running.url}${path}`);
  return { status: response.status, body: await response.json() };
}

async function statusOf(id: string): Promise<string | undefined> {
  const { status, body } = await getJson(`/api/v1/nodes/${id}`);
  return status === 200 ? body.lifecycle_status : undefined;
}

interface StartedAgent {
  id: string;
  process: RunningProcess;
}

/** Runs the example agent (or a copy of it at `script`) as a child process with an id of its own. */
async function startAgent(script = AGENT_SCRIPT): Promise<StartedAgent> {
  const id = `first-agent-${RUN_ID}-${++agentCount}`;
  const port = await freePort();
  const agent = startNode([script], {
    env: { PATH: process.env.PATH, CONTROL_PLANE_URL: running.url, AGENT_PORT: String(port), AGENT_ID: id },
  });
  agents.push(agent);
  return { id, process: agent };
}

/** Waits until the agent is ready, failing at once if its process ends first. */
async function untilReady(agent: StartedAgent, what: string): Promise<void> {
  await eventually(
    what,
    async () => {
      if (agent.process.child.exitCode !== null || agent.process.child.signalCode !== null) {
        throw new GiveUp(
          `the agent exited (${agent.process.child.signalCode ?? agent.process.child.exitCode})`,
        );
      }
      return (await statusOf(agent.id)) === 'ready' ? true : undefined;
    },
    () => `agent output:\n${agent.process.output()}`,
  );
}

/** Starts the example agent and waits, as a precondition of the test, until it is ready. */
async function startReadyAgent(script = AGENT_SCRIPT): Promise<StartedAgent> {
  const agent = await startAgent(script);
  await untilReady(agent, `precondition: agent ${agent.id} turns ready`);
  return agent;
}

async function openNodeStream(): Promise<void> {
  const controller = new AbortController();
  stopStream = () => controller.abort();
  const response = await fetch(`${running.url}/api/ui/v1/nodes/events`, { signal: controller.signal });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  void (async () => {
    const frames = response
      .body!.pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    try {
      for (;;) {
        const { done, value } = await frames.read();
        if (done) return;
        if (value.event) events.push({ event: value.event, data: JSON.parse(value.data) });
      }
    } catch {
      // aborted at the end of the run
    }
  })();
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sy-first-agent-'));
  database = await throwawayDatabase('sy_first_agent');
  if (!database.url) await seedDataDir(dataDir, ['control-plane']);
  running = await startServer({
    // Only these settings: a developer's SERVICE_API_KEY or SERVICE_CONFIG_FILE must not leak in
    // (tests/ has no switchyard.yaml, so no file layer applies).
    env: {
      CONTROL_PLANE_PORT: '0',
      CONTROL_PLANE_HOST: '127.0.0.1',
      SWITCHYARD_DATA_DIR: dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      // The example heartbeats every 5 s, so the TTL stays above that; everything else is short.
      SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL: '8s',
      // A just-started agent is killed below: hold it to the TTL, not to the 30 s SDK rhythm assumed by default.
      SWITCHYARD_NODE_LIFECYCLE_ASSUMED_HEARTBEAT_INTERVAL: '0',
      SWITCHYARD_NODE_LIFECYCLE_SWEEP_INTERVAL: '250ms',
      SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL: '300ms',
      SWITCHYARD_NODE_HEALTH_CHECK_TIMEOUT: '1s',
      SWITCHYARD_NODE_HEALTH_RECOVERY_DEBOUNCE: '600ms',
      // The server's own log lines would bury the test report.
      LOG_LEVEL: 'silent',
    },
  });
  await openNodeStream();
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop('SIGKILL')));
});

afterAll(async () => {
  stopStream?.();
  await running?.close();
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the first agent from the docs', () => {
  it('registers and turns ready', async () => {
    const agent = await startAgent();
    const AGENT_ID = agent.id;
    await untilReady(agent, 'agent ready');
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
    const { id: AGENT_ID } = await startReadyAgent();
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
    const sickId = `first-agent-${RUN_ID}-sick`;
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
    const { id: AGENT_ID, process: agent } = await startReadyAgent();
    agent.child.kill('SIGKILL');
    await agent.exited;
    await eventually('agent offline', async () =>
      (await statusOf(AGENT_ID)) === 'offline' ? true : undefined,
    );
    const { body } = await getJson(`/api/v1/nodes/${AGENT_ID}`);
    expect(body.status_reason).toBe('heartbeat_expired');
    // The change reaches the node stream after it is stored: on PostgreSQL through a NOTIFY, which
    // can arrive a moment after the status above was read.
    await eventually(
      'node.status_changed to offline on the node stream',
      async () =>
        events.some(
          (e) =>
            e.event === 'node.status_changed' &&
            e.data.node_id === AGENT_ID &&
            e.data.new_status === 'offline',
        ) || undefined,
      () => JSON.stringify(events.filter((e) => e.data.node_id === AGENT_ID)),
      15_000,
    );
  });

  // Regression: a checkout under a path with a space (a main-module check comparing
  // `file://${process.argv[1]}` with import.meta.url never matches there).
  it('runs from a directory whose path has a space', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sy first agent '));
    try {
      const copy = join(directory, 'agent.mjs');
      copyFileSync(AGENT_SCRIPT, copy);
      const agent = await startAgent(copy);
      await untilReady(agent, 'agent ready');
      expect(agent.process.output()).toContain(`[agent] registered ${agent.id}@1.0.0`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
