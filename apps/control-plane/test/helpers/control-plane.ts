import { createServer, type Server } from 'node:http';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { pino } from 'pino';
import { createApp } from '../../src/app.ts';
import { type Config, defaultConfig } from '../../src/config.ts';
import { controlPlaneMigrations } from '../../src/migrations/index.ts';
import type { HealthProbe } from '../../src/modules/nodes/health-probe.ts';
import { createNodeRuntime, type NodeRuntime } from '../../src/modules/nodes/runtime.ts';
import type { CountActiveExecutions, ShutdownNotifier } from '../../src/modules/nodes/service.ts';
import type { NodeHealthSettings, NodeLifecycleSettings } from '../../src/modules/nodes/settings.ts';
import { createInProcessEventBus, type EventBus } from '../../src/platform/events/index.ts';
import type { OpenStreams } from '../../src/platform/http/open-streams.ts';
import { attachUpgrades } from '../../src/platform/http/upgrade.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/platform/metrics/registry.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';
import { type ManualClock, manualClock } from './clock.ts';
import { openMigratedTestDatabase } from './database.ts';
import { expectDocumented } from './openapi.ts';

/** A control plane on 127.0.0.1 with a clock the test moves and loops the test drives. */
export interface TestControlPlane {
  base: string;
  handle: TestDatabase;
  clock: ManualClock;
  events: EventBus;
  runtime: NodeRuntime;
  /** Executions, webhooks, event log and replica lease: loops not started, tests drive them. */
  parts: Runtime;
  config: Config;
  metrics: MetricsRegistry;
  server: Server;
  errors: unknown[];
  close(): Promise<void>;
}

export interface TestControlPlaneOptions {
  handle?: TestDatabase;
  lifecycle?: Partial<NodeLifecycleSettings>;
  health?: Partial<NodeHealthSettings>;
  probe?: HealthProbe;
  notifyShutdown?: ShutdownNotifier;
  countActiveExecutions?: CountActiveExecutions;
  drainPollMs?: number;
  sseKeepAliveMs?: number;
  /** Registry of open streams (SSE, WebSocket), for tests of a shutdown ending them. */
  streams?: OpenStreams;
  events?: EventBus;
  /** Changes to the default configuration (execution queue, auth, ...). */
  config?: (config: Config) => void;
}

/**
 * Starts the real app (createApp) on a real socket with the default timings (unless overridden)
 * and a manual clock. Background loops are not started: tests call `runtime.presence.tick()`,
 * `runtime.presence.reconcile()` and `runtime.health.runOnce()` after moving the clock.
 */
export async function startTestControlPlane(
  options: TestControlPlaneOptions = {},
): Promise<TestControlPlane> {
  const handle = options.handle ?? (await openMigratedTestDatabase());
  await migrateLatest(handle.db, controlPlaneMigrations);
  const clock = manualClock();
  const events = options.events ?? createInProcessEventBus();
  const errors: unknown[] = [];
  // Error-level log lines are kept (parsed) so a test can assert that nothing failed unseen.
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  const runtime = createNodeRuntime({
    db: handle.db,
    events,
    clock,
    lifecycle: { ...defaultConfig().nodes, ...options.lifecycle },
    health: { ...defaultConfig().nodeHealth, ...options.health },
    probe: options.probe,
    notifyShutdown: options.notifyShutdown,
    countActiveExecutions: options.countActiveExecutions,
    drainPollMs: options.drainPollMs,
    log,
  });
  const config = defaultConfig();
  // Test receivers and agents listen on 127.0.0.1 over plain HTTP.
  config.executionQueue.webhookAllowHttp = true;
  config.executionQueue.webhookAllowPrivateNetworks = true;
  options.config?.(config);
  const metrics = createMetricsRegistry();
  const parts = createRuntime({ db: handle.db, config, events, clock, log, metrics, nodeRuntime: runtime });
  const app = createApp({
    db: handle.db,
    config,
    events,
    clock,
    runtime: parts,
    metrics,
    sseKeepAliveMs: options.sseKeepAliveMs,
    streams: options.streams,
    log,
  });
  const server = createServer(app.callback());
  attachUpgrades(server, app.callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    base,
    handle,
    clock,
    events,
    runtime,
    parts,
    config,
    metrics,
    server,
    errors,
    async close() {
      await parts.stop(0);
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await events.close();
      if (!options.handle) await handle.close();
    },
  };
}

let counter = 0;

/** A node id no other test in the file uses. */
export function uniqueNodeId(prefix = 'node'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** A registration body as real SDKs send it. */
export function registration(id: string, baseUrl: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    version: '1.0.0',
    base_url: baseUrl,
    deployment_type: 'long_running',
    tags: ['test'],
    metadata: { team: 'qa' },
    reasoners: [
      {
        id: 'summarize',
        description: 'Summarises text',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        output_schema: { type: 'object' },
        tags: ['nlp'],
      },
    ],
    skills: [{ id: 'word_count', input_schema: { type: 'object' }, tags: ['text'] }],
    ...overrides,
  };
}

/** JSON request helper: returns status, headers and the parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; the raw text is returned
  }
  const answer = { status: response.status, headers: response.headers, body: parsed };
  // Every answer a test sees is also held to the OpenAPI document the server publishes.
  await expectDocumented(base, method, path, answer);
  return answer;
}
