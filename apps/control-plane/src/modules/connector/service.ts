import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Logger } from '../../platform/logger.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import {
  listNodeInstances,
  type NodeInstanceRecord,
  type NodeRuntime,
  requestRestart,
  setTrafficWeight,
} from '../nodes/index.ts';
import type { ConnectorListings, ListAnswer } from './listings.ts';
import type { RestartSchema } from './responses.ts';
import type { FunctionRef, GroupListQuery, ReasonerListQuery, VersionScope } from './schemas.ts';
import {
  functionsOfNode,
  groupView,
  offers,
  reasonerView,
  type ViewContext,
  versionsView,
  versionView,
} from './views.ts';

export interface ConnectorServiceDeps {
  db: Knex;
  nodes: NodeRuntime;
  /** The control plane's API key as it is now, sent to agents as X-API-Key with a restart request. */
  agentApiKey: () => string | undefined;
  /** The paged, cached lists of functions and groups. */
  listings: ConnectorListings;
  /** Where weight changes and restart requests are recorded (who shifted traffic, and when). */
  log?: Logger;
}

function nodeNotFound(nodeId: string): ProblemError {
  return new ProblemError(
    'not_found',
    `No node "${nodeId}" is registered. List what is with GET /connector/groups.`,
  );
}

function functionNotFound(fn: FunctionRef, instances: NodeInstanceRecord[]): ProblemError {
  const known = functionsOfNode(instances).map((f) => f.fn.id);
  return new ProblemError(
    'not_found',
    `Node "${fn.nodeId}" has no ${fn.type} "${fn.name}"` +
      (known.length
        ? ` (its functions: ${known.slice(0, 20).join(', ')}).`
        : ' (it registered no functions).'),
  );
}

function versionNotFound(id: string, version: string, scope: NodeInstanceRecord[]): ProblemError {
  const shown = version.length > 100 ? `${version.slice(0, 100)}…` : version;
  return new ProblemError(
    'not_found',
    `"${id}" has no version "${shown}" (its versions: ${scope.map((i) => i.version).join(', ')}).`,
  );
}

/** What the connector reads and changes, on top of the nodes feature. */
export function createConnectorService(deps: ConnectorServiceDeps) {
  const { nodes } = deps;
  const context = (): ViewContext => ({
    now: nodes.clock.now(),
    staleThresholdMs: nodes.healthSettings.heartbeatStaleThresholdMs,
  });

  async function instancesOf(nodeId: string): Promise<NodeInstanceRecord[]> {
    const instances = await listNodeInstances(deps.db, { nodeId });
    if (instances.length === 0) throw nodeNotFound(nodeId);
    return instances;
  }

  /** The instances a versions path speaks of: all of the node's, or those serving the function. */
  async function scopeOf(scope: VersionScope): Promise<NodeInstanceRecord[]> {
    const instances = await instancesOf(scope.nodeId);
    const fn = scope.fn;
    if (!fn) return instances;
    const serving = instances.filter((i) => offers(i, fn));
    if (serving.length === 0) throw functionNotFound(fn, instances);
    return serving;
  }

  async function oneVersion(scope: VersionScope, version: string) {
    const instances = await scopeOf(scope);
    const instance = instances.find((i) => i.version === version);
    if (!instance) throw versionNotFound(scope.fn?.id ?? scope.nodeId, version, instances);
    return { instances, instance };
  }

  return {
    /** One page of every function of every node (schemas left out), as a JSON answer. */
    listReasoners(query: ReasonerListQuery): Promise<ListAnswer> {
      return deps.listings.reasoners(query);
    },

    /** One function with its schemas, as the best-placed version serving it registered them. */
    async reasoner(fn: FunctionRef) {
      const serving = await scopeOf({ nodeId: fn.nodeId, fn });
      return reasonerView(fn, serving, true);
    },

    /** One page of the groups (one per node id), as a JSON answer. */
    listGroups(query: GroupListQuery): Promise<ListAnswer> {
      return deps.listings.groups(query);
    },

    async group(nodeId: string) {
      return groupView(await instancesOf(nodeId));
    },

    async versions(scope: VersionScope) {
      return versionsView(scope.nodeId, scope.fn, await scopeOf(scope), context());
    },

    async version(scope: VersionScope, version: string) {
      const { instances, instance } = await oneVersion(scope, version);
      const routable = versionsView(scope.nodeId, scope.fn, instances, context()).routable_weight;
      return versionView(instance, routable, context());
    },

    /**
     * Sets the weight of the node version (it applies to every function the version serves) and
     * answers the version record as it now is, its share computed over the path's scope.
     */
    async setWeight(scope: VersionScope, version: string, weight: number) {
      const { instance } = await oneVersion(scope, version);
      const updated = await setTrafficWeight(deps.db, nodes, instance, weight);
      if (!updated) throw versionNotFound(scope.fn?.id ?? scope.nodeId, version, []);
      if (updated.trafficWeight !== instance.trafficWeight || updated.revision !== instance.revision) {
        deps.log?.info(
          { node_id: instance.nodeId, version, weight, previous_weight: instance.trafficWeight },
          'connector: traffic weight set',
        );
      }
      return this.version(scope, version);
    },

    /** Asks the agent of one version to restart; see nodes/restart.ts for what changes. */
    async restart(scope: VersionScope, version: string) {
      const { instance } = await oneVersion(scope, version);
      const who = `${instance.nodeId}@${instance.version}`;
      const outcome = await requestRestart(nodes, instance, {
        apiKey: deps.agentApiKey(),
        reason: 'connector restart request',
      });
      deps.log?.info(
        {
          node_id: instance.nodeId,
          version,
          outcome: outcome.kind,
          agent_status: 'status' in outcome ? outcome.status : null,
        },
        'connector: restart requested',
      );
      switch (outcome.kind) {
        case 'accepted':
          return {
            node_id: instance.nodeId,
            version: instance.version,
            accepted: true as const,
            agent_status: outcome.status,
            status: outcome.record.lifecycleStatus,
            status_reason: outcome.record.statusReason,
            admin_state: outcome.record.adminState,
          } satisfies ResponseBody<typeof RestartSchema>;
        case 'unsupported':
          throw new ProblemError(
            'conflict',
            `The agent of ${who} does not support restarts: POST {base_url}/_internal/restart answered ${outcome.status}.`,
            {
              resolution:
                'Restart the agent process yourself, or upgrade it to an agent that implements /_internal/restart.',
              extensions: { agent_status: outcome.status },
            },
          );
        case 'failed':
          throw new ProblemError(
            'upstream_unavailable',
            outcome.status === null
              ? `Could not reach the agent of ${who} at its base_url: ${outcome.error}.`
              : `The agent of ${who} refused the restart: POST {base_url}/_internal/restart answered ${outcome.status}.`,
            { extensions: { agent_status: outcome.status } },
          );
        case 'timeout':
          throw new ProblemError(
            'upstream_timeout',
            `The agent of ${who} did not answer the restart request within ${outcome.timeoutMs} ms.`,
            { resolution: 'Check that the agent is running; its restart may still happen.' },
          );
      }
    },
  };
}

export type ConnectorService = ReturnType<typeof createConnectorService>;
