import Router from '@koa/router';
import { ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import { parseWith, readJsonBody } from '../../platform/http/request-body.ts';
import type { NodeRuntime } from './runtime.ts';
import {
  BulkStatusSchema,
  HeartbeatSchema,
  LifecycleReportSchema,
  NodeActionSchema,
  NodeIdSchema,
  NodeListQuerySchema,
  RefreshSchema,
  RegistrationSchema,
  StatusUpdateSchema,
} from './schemas.ts';
import {
  actionView,
  bulkStatusView,
  fleetRefreshView,
  heartbeatView,
  instanceView,
  nodeListView,
  nodeView,
  registeredView,
  shutdownView,
  statusView,
} from './views.ts';

/** Body limits: registrations carry schemas; the agent's periodic messages are small. */
const REGISTRATION_LIMIT = 1024 * 1024;
const HEARTBEAT_LIMIT = 64 * 1024;
const STATUS_LIMIT = 256 * 1024;
const BULK_LIMIT = 512 * 1024;
const ACTION_LIMIT = 16 * 1024;

/**
 * The most bytes of node records one `GET /api/ui/v1/nodes` answer carries. `limit` bounds the
 * nodes of a page, not its size: a node may register 2,000 functions with schemas (about 1 MiB
 * each), and 40 MB answers built in one go starved every other request. With function schemas
 * left out by default, a page rarely comes near this; with include_schemas it ends early.
 */
export const LIST_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The node id of the path. An id that could never have been registered (a dot, a NUL, 201
 * characters) names no node: 404 without asking the database.
 */
function nodeIdOf(ctx: Context): string {
  const id = String(ctx.params.id);
  if (!NodeIdSchema.safeParse(id).success) {
    throw new ProblemError(
      'not_found',
      `Node "${id.slice(0, 200)}" is not registered (not a valid node id).`,
    );
  }
  return id;
}

/** Reads an optional JSON body: no body at all reads as `{}`. */
async function optionalBody(ctx: Context, limit: number): Promise<unknown> {
  return (await readJsonBody(ctx, limit)) ?? {};
}

/**
 * The node API: /api/v1/nodes/* for agents and operators, GET /api/ui/v1/nodes for the UI.
 * Paths with a fixed second segment (`status/bulk`, `status/refresh`) cannot collide with
 * `/:id/...` routes, which all have a literal after the id.
 */
export function nodesRouter(deps: { runtime: NodeRuntime }): Router {
  const { nodes, clock, lifecycle, healthSettings } = deps.runtime;
  const stale = healthSettings.heartbeatStaleThresholdMs;
  const now = () => clock.now();
  const router = new Router();

  const register = async (ctx: Context) => {
    const registration = parseWith(RegistrationSchema, await readJsonBody(ctx, REGISTRATION_LIMIT));
    const { record, created } = await nodes.register(registration);
    ctx.status = created ? 201 : 200;
    ctx.set('Location', `/api/v1/nodes/${encodeURIComponent(record.nodeId)}`);
    ctx.body = registeredView(record, now(), stale, lifecycle.heartbeatTtlMs);
  };
  router.post('/api/v1/nodes/register', register);
  router.post('/api/v1/nodes', register);

  // Fleet-wide routes first: readable, although the path shapes already keep them apart.
  router.post('/api/v1/nodes/status/bulk', async (ctx) => {
    const { node_ids } = parseWith(BulkStatusSchema, await readJsonBody(ctx, BULK_LIMIT));
    ctx.body = bulkStatusView(node_ids, await nodes.bulk(node_ids));
  });

  router.post('/api/v1/nodes/status/refresh', async (ctx) => {
    parseWith(RefreshSchema, await optionalBody(ctx, ACTION_LIMIT));
    const { sweep, checks, instances } = await nodes.refreshAll();
    ctx.body = fleetRefreshView({ sweep, checked: checks.length, instances }, now());
  });

  router.get('/api/v1/nodes/:id', async (ctx) => {
    ctx.body = nodeView(await nodes.instances(nodeIdOf(ctx)), now(), stale);
  });

  router.post('/api/v1/nodes/:id/heartbeat', async (ctx) => {
    const body = parseWith(HeartbeatSchema, await optionalBody(ctx, HEARTBEAT_LIMIT));
    const record = await nodes.heartbeat(nodeIdOf(ctx), body);
    ctx.body = heartbeatView(record, lifecycle.heartbeatTtlMs);
  });

  router.patch('/api/v1/nodes/:id/status', async (ctx) => {
    const body = parseWith(StatusUpdateSchema, await optionalBody(ctx, STATUS_LIMIT));
    await nodes.updateStatus(nodeIdOf(ctx), body);
    ctx.body = statusView(await nodes.instances(nodeIdOf(ctx)), now(), stale);
  });

  router.get('/api/v1/nodes/:id/status', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = statusView(await nodes.status(nodeIdOf(ctx)), now(), stale);
  });

  router.post('/api/v1/nodes/:id/status/refresh', async (ctx) => {
    parseWith(RefreshSchema, await optionalBody(ctx, ACTION_LIMIT));
    ctx.body = statusView(await nodes.refresh(nodeIdOf(ctx)), now(), stale);
  });

  router.post('/api/v1/nodes/:id/lifecycle/status', async (ctx) => {
    const body = parseWith(LifecycleReportSchema, await readJsonBody(ctx, HEARTBEAT_LIMIT));
    const record = await nodes.reportLifecycle(nodeIdOf(ctx), body.status, body.version);
    ctx.body = instanceView(record, now(), stale);
  });

  for (const action of ['start', 'stop'] as const) {
    router.post(`/api/v1/nodes/:id/${action}`, async (ctx) => {
      const body = parseWith(NodeActionSchema, await optionalBody(ctx, ACTION_LIMIT));
      const instances = await nodes[action](nodeIdOf(ctx), body);
      ctx.body = actionView(nodeIdOf(ctx), action, instances, now(), stale);
    });
  }

  router.post('/api/v1/nodes/:id/shutdown', async (ctx) => {
    const body = parseWith(NodeActionSchema, await optionalBody(ctx, ACTION_LIMIT));
    const outcomes = await nodes.shutdown(nodeIdOf(ctx), body);
    ctx.body = shutdownView(nodeIdOf(ctx), outcomes);
  });

  router.get('/api/ui/v1/nodes', async (ctx) => {
    const query = parseWith(NodeListQuerySchema, ctx.query, 'query');
    const filter = { nodeId: query.node_id, status: query.status, tag: query.tag };
    const total = await nodes.countNodes(filter);
    const list: ReturnType<typeof nodeView>[] = [];
    let bytes = 0;
    const page = nodes.pageNodes(filter, {
      limit: query.limit,
      offset: query.offset,
      functions: query.include_schemas ? 'full' : 'summary',
    });
    for await (const group of page) {
      const view = nodeView(group, now(), stale);
      const size = Buffer.byteLength(JSON.stringify(view));
      // The page ends before the node that would cross the bound (leaving the generator stops
      // the reads); a node larger than the bound on its own still makes a page of one.
      if (list.length > 0 && bytes + size > LIST_ANSWER_BYTES) break;
      list.push(view);
      bytes += size;
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = nodeListView(list, total, query);
  });

  return router;
}
