import type Router from '@koa/router';
import type { Database } from '@switchyard/shared/db';
import Koa from 'koa';
import type { Config } from './config/config.ts';
import { defaultConfig } from './config/load-config.ts';
import { createInProcessEventBus, type EventBus, NODES_TOPIC } from './events/index.ts';
import { apiKeyAuth } from './http/auth.ts';
import { mountRouters } from './http/fallback.ts';
import type { OpenStreams } from './http/open-streams.ts';
import { problemMiddleware } from './http/problem-middleware.ts';
import { createServiceMetrics, type ServiceMetrics } from './metrics/service-metrics.ts';
import { discoveryRouter } from './routes/discovery.ts';
import { healthRouter } from './routes/health.ts';
import { metricsRouter } from './routes/metrics.ts';
import { nodeEventsRouter } from './routes/node-events.ts';
import { nodesRouter } from './routes/nodes.ts';
import { createDiscoveryService } from './services/discovery.ts';
import { createHealthService, storageProbe } from './services/health.ts';
import { createNodeRuntime, type NodeRuntime } from './services/nodes-runtime.ts';
import { listNodeInstances } from './storage/nodes.ts';
import { VERSION } from './version.ts';

export interface AppDeps {
  db: Database;
  /** The validated configuration (see config/); defaults to defaultConfig(). */
  config?: Config;
  /** The metrics every service records into; defaults to a fresh registry. */
  metrics?: ServiceMetrics;
  /** Carries node events (and more) between services and replicas; defaults to an in-process bus. */
  events?: EventBus;
  /** Time source for caches and timers, so tests can drive time; defaults to Date. */
  clock?: { now(): number };
  /**
   * The node service and its background loops. server.ts creates it (with the same events and
   * clock) so it can start and stop the loops; when omitted the app builds one whose loops
   * never run, and tests drive them through `presence.tick()` / `health.runOnce()`.
   */
  nodeRuntime?: NodeRuntime;
  /** Interval of keep-alive comments on SSE streams; 15 s by default (tests shorten it). */
  sseKeepAliveMs?: number;
  /** Registry of open SSE streams, so server.ts can end them when it shuts down. */
  streams?: OpenStreams;
  /** How long the health report waits for the database; 2 s by default. */
  storageProbeTimeoutMs?: number;
  /** Where unexpected errors are reported; defaults to stderr. */
  logError?: (error: unknown, context: string) => void;
}

/** Builds the Koa app from its dependencies. It never listens: server.ts does, tests use callback(). */
export function createApp(deps: AppDeps): Koa {
  const logError = deps.logError ?? ((error, context) => console.error(`[control-plane] ${context}`, error));
  const config = deps.config ?? defaultConfig();
  const metrics = deps.metrics ?? createServiceMetrics();
  const events = deps.events ?? createInProcessEventBus();
  const clock = deps.clock ?? Date;

  const nodeRuntime =
    deps.nodeRuntime ??
    createNodeRuntime({
      db: deps.db,
      events,
      clock,
      lifecycle: config.nodes,
      health: config.nodeHealth,
      logError,
    });

  const discovery = createDiscoveryService({
    listInstances: () => listNodeInstances(deps.db),
    metrics,
    cacheTtlMs: config.discovery.cacheTtlMs,
    clock,
  });
  // Any node change (registration, status, removal, update) may change a discovery answer.
  events.subscribe(NODES_TOPIC, () => discovery.invalidate());

  const health = createHealthService({
    version: VERSION,
    probes: {
      storage: storageProbe(deps.db, deps.storageProbeTimeoutMs),
      cache: discovery.cacheProbe(),
    },
  });

  const routers: Router[] = [
    healthRouter({ health }),
    metricsRouter({ metrics }),
    discoveryRouter({ discovery }),
    nodesRouter({ runtime: nodeRuntime }),
    nodeEventsRouter({ events, keepAliveMs: deps.sseKeepAliveMs, streams: deps.streams }),
  ];

  const app = new Koa();
  app.use(problemMiddleware({ onUnexpected: (error, ctx) => logError(error, `${ctx.method} ${ctx.path}`) }));
  app.use(apiKeyAuth(config.api.auth));
  for (const middleware of mountRouters(routers)) app.use(middleware);
  return app;
}
