import Router from '@koa/router';
import { ProblemError, toIso } from '@switchyard/shared';
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
import { bulkEntry, groupByNode, instanceView, nodeView, statusView } from './views.ts';

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
    ctx.body = {
      ...instanceView(record, now(), stale),
      // Agents may heartbeat more often than their SDK default; this is the rate that keeps
      // them inside the TTL with two heartbeats to spare.
      heartbeat_ttl_seconds: lifecycle.heartbeatTtlMs / 1000,
      heartbeat_interval_seconds: Math.max(1, Math.floor(lifecycle.heartbeatTtlMs / 3000)),
    };
  };
  router.post('/api/v1/nodes/register', register);
  router.post('/api/v1/nodes', register);

  // Fleet-wide routes first: readable, although the path shapes already keep them apart.
  router.post('/api/v1/nodes/status/bulk', async (ctx) => {
    const { node_ids } = parseWith(BulkStatusSchema, await readJsonBody(ctx, BULK_LIMIT));
    const found = await nodes.bulk(node_ids);
    // Built with fromEntries (own data properties), not `body[id] = ...`: assigning to
    // "__proto__" would set the prototype instead and drop that id from the answer.
    ctx.body = Object.fromEntries(
      node_ids.map((id) => {
        const instances = found.get(id);
        return [
          id,
          instances
            ? bulkEntry(instances)
            : { status: null, version: null, last_heartbeat: null, error: 'not_found' },
        ];
      }),
    );
  });

  router.post('/api/v1/nodes/status/refresh', async (ctx) => {
    parseWith(RefreshSchema, await optionalBody(ctx, ACTION_LIMIT));
    const { sweep, checks, instances } = await nodes.refreshAll();
    const grouped = groupByNode(instances);
    ctx.body = {
      reconciled_at: toIso(now()),
      checked: checks.length,
      expired: sweep.expired.map((k) => ({ node_id: k.nodeId, version: k.version, old_status: k.oldStatus })),
      evicted: sweep.evicted.map((k) => ({ node_id: k.nodeId, version: k.version })),
      timed_out: sweep.timedOut.map((k) => ({ node_id: k.nodeId, version: k.version })),
      nodes: Object.fromEntries([...grouped].map(([id, list]) => [id, bulkEntry(list)])),
    };
  });

  router.get('/api/v1/nodes/:id', async (ctx) => {
    ctx.body = nodeView(await nodes.instances(nodeIdOf(ctx)), now(), stale);
  });

  router.post('/api/v1/nodes/:id/heartbeat', async (ctx) => {
    const body = parseWith(HeartbeatSchema, await optionalBody(ctx, HEARTBEAT_LIMIT));
    const record = await nodes.heartbeat(nodeIdOf(ctx), body);
    ctx.body = {
      node_id: record.nodeId,
      version: record.version,
      status: record.lifecycleStatus,
      lifecycle_status: record.lifecycleStatus,
      last_heartbeat: record.lastHeartbeat,
      lease_expires_at: record.leaseExpiresAt,
      // The configured floor (spec), then what this heartbeat earned: presence adapts the lease
      // to the node's own rhythm (lifecycle.leaseTtlMs).
      heartbeat_ttl_seconds: lifecycle.heartbeatTtlMs / 1000,
      lease_ttl_seconds:
        record.leaseExpiresAt && record.lastHeartbeat
          ? (Date.parse(record.leaseExpiresAt) - Date.parse(record.lastHeartbeat)) / 1000
          : null,
      observed_heartbeat_interval_seconds:
        record.observedHeartbeatIntervalMs === null
          ? null
          : Math.round(record.observedHeartbeatIntervalMs) / 1000,
    };
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
      ctx.body = {
        node_id: nodeIdOf(ctx),
        action,
        instances: instances.map((i) => instanceView(i, now(), stale)),
      };
    });
  }

  router.post('/api/v1/nodes/:id/shutdown', async (ctx) => {
    const body = parseWith(NodeActionSchema, await optionalBody(ctx, ACTION_LIMIT));
    const outcomes = await nodes.shutdown(nodeIdOf(ctx), body);
    ctx.body = {
      node_id: nodeIdOf(ctx),
      action: 'shutdown',
      instances: outcomes.map(({ record, ...outcome }) => ({
        ...outcome,
        lifecycle_status: record.lifecycleStatus,
        status_reason: record.statusReason,
        admin_state: record.adminState,
        lease_expires_at: record.leaseExpiresAt,
      })),
    };
  });

  router.get('/api/ui/v1/nodes', async (ctx) => {
    const query = parseWith(NodeListQuerySchema, ctx.query, 'query');
    const filter = { nodeId: query.node_id, status: query.status, tag: query.tag };
    const total = await nodes.countNodes(filter);
    const list: unknown[] = [];
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
    const hasMore = query.offset + list.length < total;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      nodes: list,
      total,
      pagination: {
        limit: query.limit,
        offset: query.offset,
        has_more: hasMore,
        next_offset: hasMore ? query.offset + list.length : null,
      },
    };
  });

  return router;
}
