import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import { OutboundError } from '../../platform/outbound/index.ts';
import { nodeAgentCalls } from './agent-calls.ts';
import { agentUrl } from './agent-urls.ts';
import { checkFunctionSchemas } from './function-schemas.ts';
import type { HealthMonitor } from './health-monitor.ts';
import { leaseTtlMs, moveAfterClaim, stateAtRegistration } from './lifecycle.ts';
import type { PresenceManager } from './presence.ts';
import {
  countNodes,
  deleteInstance,
  type FunctionDetail,
  type InstanceFilter,
  type InstancePatch,
  insertInstance,
  listNodeIds,
  listNodeInstances,
  lockInstance,
  recordHeartbeat,
  replaceInstance,
} from './repository.ts';
import { chooseWeighted } from './routing.ts';
import type {
  Heartbeat,
  LifecycleStatus,
  NodeAction,
  NodeInstanceRecord,
  Registration,
  StatusUpdate,
} from './schemas.ts';
import type { NodeHealthSettings, NodeLifecycleSettings } from './settings.ts';
import { movePatch, type NodeTransitions } from './transitions.ts';
import { groupByNode } from './views.ts';

/**
 * How many executions an instance is running, for the shutdown drain. The execution capability
 * provides the real count; until it exists nothing runs on agents, so the default answers 0 and
 * a shutdown does not wait.
 */
export type CountActiveExecutions = (nodeId: string, version: string) => Promise<number>;

/** Tells an agent it is being shut down: `POST {base_url}/_internal/shutdown` (see agentUrl). */
export type ShutdownNotifier = (
  instance: NodeInstanceRecord,
  body: { node_id: string; version: string; reason: string },
  timeoutMs: number,
) => Promise<{ delivered: boolean; error: string | null }>;

export const httpShutdownNotifier: ShutdownNotifier = async (instance, body, timeoutMs) => {
  let status: number;
  try {
    const response = await nodeAgentCalls.request(agentUrl(instance.baseUrl, '_internal', 'shutdown'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      timeoutMs,
      // Only the status matters; the body is read (up to this much) so the connection can be reused.
      maxBodyBytes: 64 * 1024,
      overLimit: 'truncate',
    });
    status = response.status;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    if (error.status === null) return { delivered: false, error: error.code ?? error.message };
    status = error.status;
  }
  return status >= 200 && status < 300
    ? { delivered: true, error: null }
    : { delivered: false, error: `agent answered ${status}` };
};

export interface NodeServiceDeps {
  db: Knex;
  transitions: NodeTransitions;
  presence: PresenceManager;
  health: HealthMonitor;
  clock: Clock;
  lifecycle: NodeLifecycleSettings;
  healthSettings: NodeHealthSettings;
  countActiveExecutions?: CountActiveExecutions;
  notifyShutdown?: ShutdownNotifier;
  /** Longest a shutdown waits for executions to drain unless the request says otherwise. */
  drainTimeoutMs?: number;
  /** How often the drain re-counts active executions. */
  drainPollMs?: number;
}

/** One instance's part in a shutdown. */
export interface ShutdownOutcome {
  version: string;
  drained: boolean;
  active_executions: number;
  drain_waited_ms: number;
  notified: boolean;
  notify_error: string | null;
  record: NodeInstanceRecord;
}

function notFound(nodeId: string): ProblemError {
  return new ProblemError(
    'not_found',
    `Node "${nodeId}" is not registered. Register it with POST /api/v1/nodes/register.`,
  );
}

/** Node registration, agent reports, operator actions and status queries. */
export function createNodeService(deps: NodeServiceDeps) {
  const countActive: CountActiveExecutions = deps.countActiveExecutions ?? (async () => 0);
  const notify = deps.notifyShutdown ?? httpShutdownNotifier;
  const drainPollMs = deps.drainPollMs ?? 250;
  const threshold = deps.healthSettings.consecutiveFailures;

  /** The lease a sign of life at `at` earns an instance with this observed heartbeat interval. */
  const leaseFrom = (at: number, observedIntervalMs: number | null) =>
    new Date(at + leaseTtlMs(observedIntervalMs, deps.lifecycle));

  async function instancesOf(nodeId: string, version?: string): Promise<NodeInstanceRecord[]> {
    const all = await listNodeInstances(deps.db, { nodeId });
    if (all.length === 0) throw notFound(nodeId);
    if (version === undefined) return all;
    const one = all.filter((i) => i.version === version);
    if (one.length === 0) {
      throw new ProblemError(
        'not_found',
        `Node "${nodeId}" has no instance with version "${version}" (registered: ${all.map((i) => i.version).join(', ')}).`,
      );
    }
    return one;
  }

  /**
   * Records a sign of life first (one atomic UPDATE), then applies the agent's claim. A heartbeat
   * without a status counts as the agent saying it is ready. A sign of life from an evicted
   * instance revives its last registration (agent SDKs keep heartbeating after a 404 but never
   * register again): it is announced as registered again, and the move back from offline is
   * recorded with the reason `revived`.
   */
  async function signOfLife(
    nodeId: string,
    version: string | undefined,
    claim: LifecycleStatus,
    extra: (current: NodeInstanceRecord) => InstancePatch = () => ({}),
  ): Promise<NodeInstanceRecord> {
    const now = deps.clock.now();
    const heartbeat = await recordHeartbeat(deps.db, nodeId, version, new Date(now), deps.lifecycle);
    if (!heartbeat) {
      if (version !== undefined) await instancesOf(nodeId, version); // throws the precise 404
      throw notFound(nodeId);
    }
    const { record: recorded, revived } = heartbeat;
    if (revived) await deps.transitions.announce('node.registered', recorded);
    const applied = await deps.transitions.apply(
      recorded,
      (current, at) => {
        const claimed = moveAfterClaim(current, claim, threshold);
        const move =
          revived && claimed?.reason === 'heartbeat_resumed'
            ? { ...claimed, reason: 'revived' as const }
            : claimed;
        const patch: InstancePatch = { ...movePatch(move, at), ...extra(current) };
        if (current.reportedStatus !== claim) patch.reportedStatus = claim;
        return Object.keys(patch).length > 0 ? patch : null;
      },
      recorded,
    );
    // Evicted between the two statements: the agent must register again.
    if (!applied) throw notFound(nodeId);
    return applied.record;
  }

  return {
    /**
     * Registers an instance, once ajv has compiled every function schema (400 invalid_request
     * naming each one it cannot compile). A new (id, version) is inserted in `starting`; the same pair again
     * replaces the description and starts it over (keeping an operator's stop). Announces
     * node.registered, and node.status_changed when a replacement changed the status.
     */
    async register(registration: Registration): Promise<{ record: NodeInstanceRecord; created: boolean }> {
      const invalid = await checkFunctionSchemas(registration);
      if (invalid.length > 0) {
        throw new ProblemError(
          'invalid_request',
          `The body is invalid: ${invalid.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
          { extensions: { errors: invalid } },
        );
      }
      const now = deps.clock.now();
      const at = new Date(now);
      const values = {
        nodeId: registration.id,
        version: registration.version,
        baseUrl: registration.base_url,
        publicUrl: registration.public_url ?? null,
        deploymentType: registration.deployment_type,
        tags: registration.tags,
        proposedTags: registration.proposed_tags,
        acceptsWebhook: registration.accepts_webhook,
        metadata: registration.metadata,
        reasoners: registration.reasoners,
        skills: registration.skills,
      };
      const outcome = await deps.db.transaction(async (trx) => {
        let existing = await lockInstance(trx, values);
        if (existing?.evictedAt) {
          // An evicted instance is gone as far as clients know: registering it again is a new
          // registration (201, fresh state, an operator's old stop forgotten), not a replacement.
          await deleteInstance(trx, values);
          existing = undefined;
        }
        const state = stateAtRegistration(existing);
        if (!existing) {
          const record = await insertInstance(trx, values, {
            lifecycleStatus: state.status,
            statusReason: state.reason,
            adminState: state.adminState,
            at,
            leaseExpiresAt: leaseFrom(now, null),
          });
          return { record, created: true, before: undefined };
        }
        const record = await replaceInstance(
          trx,
          values,
          {
            lifecycleStatus: state.status,
            statusReason: state.reason,
            statusChangedAt: existing.lifecycleStatus === state.status ? undefined : at,
            adminState: state.adminState,
            reportedStatus: null,
            lastSeenAt: at,
            // A registration is a new process: its rhythm is observed afresh.
            observedHeartbeatIntervalMs: null,
            leaseExpiresAt: leaseFrom(now, null),
            healthFailures: 0,
            healthySince: null,
            nextCheckAt: null,
          },
          at,
        );
        return { record, created: false, before: existing };
      });
      await deps.transitions.announce('node.registered', outcome.record);
      if (outcome.before && outcome.before.lifecycleStatus !== outcome.record.lifecycleStatus) {
        await deps.transitions.statusChanged(
          outcome.record,
          outcome.before.lifecycleStatus,
          outcome.record.statusReason,
        );
      }
      return { record: outcome.record, created: outcome.created };
    },

    /** `POST /api/v1/nodes/{id}/heartbeat`. */
    heartbeat(nodeId: string, body: Heartbeat): Promise<NodeInstanceRecord> {
      return signOfLife(nodeId, body.version, body.status ?? 'ready');
    },

    /** `PATCH /api/v1/nodes/{id}/status`: a heartbeat that also stores custom health data. */
    async updateStatus(nodeId: string, body: StatusUpdate): Promise<NodeInstanceRecord> {
      const claim = body.status ?? body.state ?? 'ready';
      const health = body.health;
      // SDKs PATCH every few seconds, usually with the same health; node.updated makes every
      // replica drop its discovery cache, so it is announced only when the stored health changed.
      // `decide` may run again after a conflicting write: its last run is the one written.
      let healthWritten = false;
      const record = await signOfLife(nodeId, body.version, claim, (current) => {
        healthWritten =
          health !== undefined && JSON.stringify(health) !== JSON.stringify(current.customHealth);
        return healthWritten ? { customHealth: health } : {};
      });
      if (healthWritten) await deps.transitions.announce('node.updated', record);
      return record;
    },

    /** `POST /api/v1/nodes/{id}/lifecycle/status`: the agent reports its state. */
    reportLifecycle(nodeId: string, status: LifecycleStatus, version?: string): Promise<NodeInstanceRecord> {
      return signOfLife(nodeId, version, status);
    },

    /** Every instance of a node; 404 not_found when there is none. */
    instances: (nodeId: string) => instancesOf(nodeId),

    /** Instances of the fleet, filtered. */
    list: (filter: InstanceFilter = {}) => listNodeInstances(deps.db, filter),

    /** How many nodes have instances the filter selects. */
    countNodes: (filter: InstanceFilter = {}) => countNodes(deps.db, filter),

    /**
     * One page of nodes (by node id, `limit` from `offset`), each yielded with its selected
     * instances. Instances are read a few nodes at a time as the caller consumes them, so a
     * caller that stops early (the UI list stops at its answer's byte bound) has not read the
     * rest, and one read never holds more than a few nodes' registrations.
     */
    async *pageNodes(
      filter: InstanceFilter,
      page: { limit: number; offset: number; functions: FunctionDetail },
    ): AsyncGenerator<NodeInstanceRecord[]> {
      const ids = await listNodeIds(deps.db, filter, page);
      const chunk = page.functions === 'full' ? 8 : 50;
      for (let start = 0; start < ids.length; start += chunk) {
        const some = ids.slice(start, start + chunk);
        const grouped = groupByNode(
          await listNodeInstances(deps.db, { ...filter, nodeIds: some }, page.functions),
        );
        for (const id of some) {
          const group = grouped.get(id);
          if (group) yield group; // absent: evicted or changed since the page of ids was read
        }
      }
    },

    /**
     * Instances of a node with health results no older than the status cache TTL: an instance
     * whose last probe is older (or that was never probed) is probed now. Offline and stopped
     * instances are not probed.
     */
    async status(nodeId: string): Promise<NodeInstanceRecord[]> {
      const instances = await instancesOf(nodeId);
      const now = deps.clock.now();
      const stale = instances.filter(
        (i) =>
          i.lifecycleStatus !== 'offline' &&
          i.adminState === 'active' &&
          (!i.health.lastCheckAt || now - Date.parse(i.health.lastCheckAt) > deps.lifecycle.statusCacheTtlMs),
      );
      if (stale.length === 0) return instances;
      await deps.health.checkAll(stale);
      return instancesOf(nodeId);
    },

    /**
     * Reconciles one node now: applies the presence rules (lease expiry, hard evict, max
     * transition time) and probes every live instance, bypassing the status cache.
     */
    async refresh(nodeId: string): Promise<NodeInstanceRecord[]> {
      await instancesOf(nodeId);
      await deps.presence.reconcile();
      const live = (await listNodeInstances(deps.db, { nodeId })).filter(
        (i) => i.lifecycleStatus !== 'offline' && i.adminState === 'active',
      );
      await deps.health.checkAll(live);
      return instancesOf(nodeId);
    },

    /** Reconciles the whole fleet now: presence rules, then a probe of every live instance. */
    async refreshAll() {
      const sweep = await deps.presence.reconcile();
      const live = (await listNodeInstances(deps.db)).filter(
        (i) => i.lifecycleStatus !== 'offline' && i.adminState === 'active',
      );
      const checks = await deps.health.checkAll(live);
      return { sweep, checks, instances: await listNodeInstances(deps.db) };
    },

    /** Instances of several nodes at once, grouped by node id (unknown ids are absent). */
    async bulk(nodeIds: string[]): Promise<Map<string, NodeInstanceRecord[]>> {
      return groupByNode(await listNodeInstances(deps.db, { nodeIds: [...new Set(nodeIds)] }));
    },

    /**
     * `stop`: the operator takes instances out of routing. They report `offline` (reason
     * `stopped`), keep their registration, and heartbeats or re-registration do not bring them
     * back until `start`.
     */
    async stop(nodeId: string, action: NodeAction): Promise<NodeInstanceRecord[]> {
      const targets = await instancesOf(nodeId, action.version);
      for (const target of targets) {
        await deps.transitions.apply(target, (current, at) =>
          current.adminState === 'stopped' && current.lifecycleStatus === 'offline'
            ? null
            : {
                adminState: 'stopped',
                ...movePatch(
                  current.lifecycleStatus === 'offline' && current.statusReason === 'stopped'
                    ? null
                    : { status: 'offline', reason: 'stopped' },
                  at,
                ),
              },
        );
      }
      return instancesOf(nodeId, action.version);
    },

    /**
     * `start`: undoes `stop` (or `shutdown`). The instance goes back to `starting` and becomes
     * `ready` at its next heartbeat or its next healthy probe. Its lease is what the agent's last
     * sign of life earned, so an agent that died meanwhile goes offline at the next sweep.
     * Starting an active instance changes nothing.
     */
    async start(nodeId: string, action: NodeAction): Promise<NodeInstanceRecord[]> {
      const targets = await instancesOf(nodeId, action.version);
      for (const target of targets) {
        await deps.transitions.apply(target, (current, at) =>
          current.adminState === 'active'
            ? null
            : {
                adminState: 'active',
                ...movePatch({ status: 'starting', reason: 'started' }, at),
                leaseExpiresAt: leaseFrom(
                  Date.parse(current.lastSeenAt),
                  current.observedHeartbeatIntervalMs,
                ),
                nextCheckAt: null,
              },
        );
      }
      return instancesOf(nodeId, action.version);
    },

    /**
     * `shutdown`: stops routing at once, waits for active executions to drain (up to the drain
     * timeout), POSTs `{base_url}/_internal/shutdown` to the agent (best effort), marks the
     * instance offline (reason `shutdown`) and releases its lease. The record stays, offline,
     * until the hard-evict rule removes it or the agent registers again.
     */
    async shutdown(nodeId: string, action: NodeAction): Promise<ShutdownOutcome[]> {
      const targets = await instancesOf(nodeId, action.version);
      const drainTimeoutMs = action.drain_timeout_ms ?? deps.drainTimeoutMs ?? 30_000;
      const reason = action.reason ?? 'shutdown';
      // Routing stops for every target before any drain starts.
      for (const target of targets) {
        await deps.transitions.apply(target, (current) =>
          current.adminState === 'shutdown' ? null : { adminState: 'shutdown' },
        );
      }
      return Promise.all(
        targets.map(async (target): Promise<ShutdownOutcome> => {
          const started = performance.now();
          let active = await countActive(target.nodeId, target.version);
          while (active > 0 && performance.now() - started < drainTimeoutMs) {
            await new Promise((done) => setTimeout(done, Math.min(drainPollMs, drainTimeoutMs)));
            active = await countActive(target.nodeId, target.version);
          }
          const waited = Math.round(performance.now() - started);
          const notice =
            action.notify === false
              ? { delivered: false, error: null }
              : await notify(
                  target,
                  { node_id: target.nodeId, version: target.version, reason },
                  deps.healthSettings.checkTimeoutMs,
                );
          const applied = await deps.transitions.apply(target, (current, at) => ({
            ...movePatch(
              current.lifecycleStatus === 'offline' && current.statusReason === 'shutdown'
                ? null
                : { status: 'offline', reason: 'shutdown' },
              at,
            ),
            adminState: 'shutdown',
            leaseExpiresAt: null,
          }));
          return {
            version: target.version,
            drained: active === 0,
            active_executions: active,
            drain_waited_ms: waited,
            notified: notice.delivered,
            notify_error: notice.error,
            record: applied?.record ?? target,
          };
        }),
      );
    },

    /** The routing choice for a new execution of `nodeId` (see {@link chooseWeighted}). */
    async pickInstance(nodeId: string, random?: () => number): Promise<NodeInstanceRecord | undefined> {
      return chooseWeighted(await listNodeInstances(deps.db, { nodeId }), random);
    },
  };
}

export type NodeService = ReturnType<typeof createNodeService>;
