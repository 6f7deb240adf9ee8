import type Router from '@koa/router';
import type { Database } from '@switchyard/shared/db';
import Koa from 'koa';
import { type Config, defaultConfig, SETTINGS_TREE, STORED_CONFIG_NAME } from './config.ts';
import { approvalsRouter } from './modules/approvals/index.ts';
import { configStoreRouter, createConfigStoreService } from './modules/config-store/index.ts';
import { configuredToken, connectorRouters, createConnectorListings } from './modules/connector/index.ts';
import { dashboardMiddleware, defaultDashboardDir } from './modules/dashboard/index.ts';
import {
  createDiscoveryMetrics,
  createDiscoveryService,
  discoveryRouter,
} from './modules/discovery/index.ts';
import { executionEventsRouter, executionsRouter } from './modules/executions/index.ts';
import { createHealthService, healthRouter, storageProbe } from './modules/health/index.ts';
import { mcpEndpoint } from './modules/mcp/index.ts';
import {
  createMemoryMetrics,
  createMemoryService,
  createVectorService,
  memoryEventSocketRouter,
  memoryEventsRouter,
  memoryRouter,
  vectorMemoryRouter,
} from './modules/memory/index.ts';
import {
  listNodeInstances,
  NODES_TOPIC,
  type NodeRuntime,
  nodeEventsRouter,
  nodesRouter,
} from './modules/nodes/index.ts';
import { createObservabilityService, observabilityRouter } from './modules/observability/index.ts';
import { overviewRouter } from './modules/overview/index.ts';
import { createDocsSiteClient, createShareService, sharesRouter } from './modules/shares/index.ts';
import { createWebhookService, webhooksRouter } from './modules/webhooks/index.ts';
import { controlPlaneOpenApi } from './openapi.ts';
import type { Clock } from './platform/clock.ts';
import { createConfigReloader } from './platform/config/live-config.ts';
import { checkStoredSettings } from './platform/config/load-config.ts';
import { createInProcessEventBus, type EventBus } from './platform/events/index.ts';
import { apiKeyAuth } from './platform/http/auth.ts';
import { mountRouters } from './platform/http/fallback.ts';
import { requireOneHostHeader } from './platform/http/host-header.ts';
import type { OpenStreams } from './platform/http/open-streams.ts';
import { handleEscapedErrors, problemMiddleware } from './platform/http/problem-middleware.ts';
import { requestLog } from './platform/http/request-log.ts';
import { createLogger, type Logger } from './platform/logger.ts';
import { createMetricsRegistry, type MetricsRegistry } from './platform/metrics/registry.ts';
import { metricsRouter } from './platform/metrics/routes.ts';
import { openApiRouter } from './platform/openapi/routes.ts';
import { VERSION } from './platform/version.ts';
import { createRuntime, type Runtime } from './runtime.ts';

export interface AppDeps {
  db: Database;
  /** The validated configuration (see config.ts); defaults to defaultConfig(). */
  config?: Config;
  /** The registry every feature registers its metrics on; defaults to a fresh one. */
  metrics?: MetricsRegistry;
  /** Carries node events (and more) between features and replicas; defaults to an in-process bus. */
  events?: EventBus;
  /** Time source for caches and timers, so tests can drive time; defaults to Date. */
  clock?: Clock;
  /** The app's logger; defaults to JSON lines on stdout at info. */
  log?: Logger;
  /**
   * The stateful parts and their background loops (runtime.ts). server.ts creates it with the
   * same database, events, clock, logger and metrics so it can start and stop the loops; when
   * omitted the app builds one whose loops never run, and tests drive them.
   */
  runtime?: Runtime;
  /** Used when the app builds its own runtime: a node runtime with a test's probe or timings. */
  nodeRuntime?: NodeRuntime;
  /** Interval of keep-alive comments on SSE streams; 15 s by default (tests shorten it). */
  sseKeepAliveMs?: number;
  /** Registry of open SSE streams, so server.ts can end them when it shuts down. */
  streams?: OpenStreams;
  /** How long the health report waits for the database; 2 s by default. */
  storageProbeTimeoutMs?: number;
  /**
   * Loads the configuration again from the sources the server started with (server.ts passes
   * one). With config_source `db` it is what POST /api/v1/configs/reload applies; without it, or
   * with config_source `file`, reload answers 503.
   */
  reloadConfig?: () => Promise<Config>;
}

/**
 * The composition root: builds the platform pieces (logger, metrics, events), then each feature
 * from them, then the Koa app. It never listens: server.ts does, tests use callback().
 */
export function createApp(deps: AppDeps): Koa {
  const config = deps.config ?? defaultConfig();
  const log = deps.log ?? createLogger();
  const registry = deps.metrics ?? createMetricsRegistry();
  const events = deps.events ?? createInProcessEventBus();
  const clock = deps.clock ?? Date;

  const runtime =
    deps.runtime ??
    createRuntime({
      db: deps.db,
      config,
      events,
      clock,
      log,
      metrics: registry,
      nodeRuntime: deps.nodeRuntime,
    });
  const nodeRuntime = runtime.nodes;

  // The configuration in force (runtime.ts): a reload changes its `live` settings (API key, skip
  // paths, log level), which are read from there on every use.
  const live = runtime.live;
  live.onApply((next) => {
    log.level = next.logging.level;
  });
  const configStore = createConfigStoreService({
    db: deps.db,
    clock,
    maxVersions: config.configStore.maxVersions,
    events,
    log,
    // The control plane's own config must be a settings document it would load; other names are
    // free text.
    check: (name, text) =>
      name === STORED_CONFIG_NAME ? checkStoredSettings(SETTINGS_TREE, text, 'request body') : [],
    reload:
      config.configSource === 'db' && deps.reloadConfig
        ? createConfigReloader({ live, load: deps.reloadConfig })
        : undefined,
  });

  const discovery = createDiscoveryService({
    listInstances: () => listNodeInstances(deps.db),
    metrics: createDiscoveryMetrics(registry),
    cacheTtlMs: config.discovery.cacheTtlMs,
    clock,
  });
  const connectorListings = createConnectorListings({
    listInstances: () => listNodeInstances(deps.db, {}, 'summary'),
    cacheTtlMs: config.connector.cacheTtlMs,
    clock,
  });
  // Any node change (registration, status, removal, update) may change a discovery answer or a
  // connector list; the bus carries each change to every replica.
  events.subscribe(NODES_TOPIC, () => {
    discovery.invalidate();
    connectorListings.invalidate();
  });

  const memoryMetrics = createMemoryMetrics(registry);
  const memory = createMemoryService({
    db: deps.db,
    eventLog: runtime.eventLog,
    clock,
    metrics: memoryMetrics,
    settings: config.memory,
  });
  const vectors = createVectorService({
    db: deps.db,
    clock,
    metrics: memoryMetrics,
    settings: config.memory,
    log,
  });

  const webhooks = createWebhookService({
    db: deps.db,
    clock,
    wake: () => runtime.webhooks.wake(),
    executionExists: async (id) => (await runtime.executions.queries.batch([id]))[id] !== undefined,
  });
  const observability = createObservabilityService({
    db: deps.db,
    clock,
    forwarder: runtime.observability,
    webhookSettings: config.executionQueue,
  });

  const health = createHealthService({
    version: VERSION,
    probes: {
      storage: storageProbe(deps.db, deps.storageProbeTimeoutMs),
      cache: discovery.cacheProbe(),
    },
  });

  const streamOptions = { keepAliveMs: deps.sseKeepAliveMs, streams: deps.streams };
  const routers: Router[] = [
    // First: executions are the hottest requests (every call and every agent's status report),
    // and each router ahead of the one that matches costs a match attempt per request.
    executionsRouter(runtime.executions),
    healthRouter({ health }),
    metricsRouter({ registry }),
    discoveryRouter({ discovery }),
    nodesRouter({ runtime: nodeRuntime }),
    nodeEventsRouter({ events, ...streamOptions }),
    executionEventsRouter({ eventLog: runtime.eventLog, ...streamOptions }),
    memoryRouter({ service: memory, maxValueBytes: config.memory.maxValueBytes }),
    memoryEventsRouter({ eventLog: runtime.eventLog, ...streamOptions }),
    memoryEventSocketRouter({ eventLog: runtime.eventLog, ...streamOptions }),
    vectorMemoryRouter({
      service: vectors,
      maxVectorDimensions: config.memory.maxVectorDimensions,
      searchResponse: config.memory.vectorSearchResponse,
    }),
    webhooksRouter({ service: webhooks }),
    observabilityRouter({ service: observability, clock }),
    // The connector API, under /connector and /api/v1/connector; its own token, not the API key.
    ...connectorRouters({
      db: deps.db,
      nodes: nodeRuntime,
      listings: connectorListings,
      access: () => config.connector,
      agentApiKey: runtime.agentApiKey,
      version: VERSION,
      configStore,
      log,
    }),
    configStoreRouter({ service: configStore, prefix: '/api/v1/configs' }),
    approvalsRouter({
      service: runtime.approvals.service,
      clock,
      settings: () => live.current().approvals,
    }),
    overviewRouter({
      db: deps.db,
      clock,
      connectorEnabled: () => configuredToken(config.connector) !== undefined,
    }),
    sharesRouter({
      service: createShareService({
        queries: runtime.executions.queries,
        docsSite: createDocsSiteClient({
          docsUrl: () => config.shares.publishUrl ?? config.shares.docsUrl,
          timeoutMs: config.shares.publishTimeoutMs,
        }),
        clock,
      }),
    }),
    mcpEndpoint({
      discovery,
      executions: runtime.executions.service,
      approvals: runtime.approvals.service,
      onFinished: (id, wake) => runtime.executions.finisher.onFinished(id, wake),
      // With decisions signed and no API key, /mcp is open: it must not decide unsigned.
      decisionsAllowed: () => {
        const current = live.current();
        return Boolean(current.api.auth.apiKey) || !current.approvals.webhookSecret;
      },
      listInstances: () => listNodeInstances(deps.db),
      events,
      clock,
      log,
      version: VERSION,
      streams: deps.streams,
      listenHost: config.server.host,
    }),
    // Each feature describes its routes in its openapi.ts (merged in openapi.ts); test/openapi.test.ts
    // holds the two lists to each other.
    openApiRouter({ document: controlPlaneOpenApi }),
  ];

  const app = new Koa();
  handleEscapedErrors(app, log);
  app.use(requestLog(log));
  app.use(problemMiddleware());
  app.use(requireOneHostHeader());
  // The dashboard's pages never need the API key (the app asks for it and sends it on its calls).
  // A build found next to the control plane is remembered; until one is, each visit looks again.
  let builtDashboard: string | undefined;
  const dashboardDir = () => {
    if (config.dashboard.dir) return config.dashboard.dir;
    builtDashboard ??= defaultDashboardDir();
    return builtDashboard;
  };
  app.use(dashboardMiddleware({ dir: dashboardDir }));
  app.use(
    apiKeyAuth(() => {
      const current = live.current();
      // A signed approval decision authenticates with its signature (approvals/signing.ts).
      const signed = current.approvals.webhookSecret ? ['/api/v1/webhooks/approval'] : [];
      return { ...current.api.auth, skipPaths: [...current.api.auth.skipPaths, ...signed] };
    }),
  );
  for (const middleware of mountRouters(routers)) app.use(middleware);
  return app;
}
