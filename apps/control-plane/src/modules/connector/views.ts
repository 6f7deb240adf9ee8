import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { compareStatus, healthView, isRoutable, type NodeInstanceRecord } from '../nodes/index.ts';
import type {
  GroupSchema,
  ReasonerSchema,
  ReasonerSummarySchema,
  VersionListSchema,
  VersionSchema,
} from './responses.ts';
import { type FunctionRef, type FunctionType, functionId } from './schemas.ts';

/*
 * The connector's records, built from node instances. A node id has one instance per version; a
 * function (reasoner or skill) is served by the instances whose registration lists it.
 */

/** Clock and staleness threshold of the health part of version records. */
export interface ViewContext {
  now: number;
  staleThresholdMs: number;
}

function functionsOf(instance: NodeInstanceRecord, type: FunctionType) {
  return type === 'skill' ? instance.skills : instance.reasoners;
}

/** True when the instance's registration lists the function. */
export function offers(instance: NodeInstanceRecord, fn: Pick<FunctionRef, 'type' | 'name'>): boolean {
  return functionsOf(instance, fn.type).some((f) => f.id === fn.name);
}

/** The ids of every function an instance registered, reasoners first. */
function functionIdsOf(instance: NodeInstanceRecord): string[] {
  return [
    ...instance.reasoners.map((f) => functionId(instance.nodeId, 'reasoner', f.id)),
    ...instance.skills.map((f) => functionId(instance.nodeId, 'skill', f.id)),
  ];
}

/** The best lifecycle status among instances (ready > degraded > starting > offline). */
function bestStatus(instances: NodeInstanceRecord[]) {
  return [...instances].sort((a, b) => compareStatus(a.lifecycleStatus, b.lifecycleStatus))[0]!
    .lifecycleStatus;
}

/** The instance whose description of a function is shown: the best status, then the newest. */
function describing(instances: NodeInstanceRecord[]): NodeInstanceRecord {
  return [...instances].sort(
    (a, b) =>
      compareStatus(a.lifecycleStatus, b.lifecycleStatus) || b.registeredAt.localeCompare(a.registeredAt),
  )[0]!;
}

/** Sum of weights, and of the weights of routable instances (the ones new executions split over). */
function weights(instances: NodeInstanceRecord[]) {
  let total = 0;
  let routable = 0;
  for (const i of instances) {
    total += i.trafficWeight;
    if (isRoutable(i)) routable += i.trafficWeight;
  }
  return { total, routable };
}

/** The share of new executions an instance gets now among `scope`, 0 to 1 (4 decimals). */
function shareOf(instance: NodeInstanceRecord, routableWeight: number): number {
  if (!isRoutable(instance) || routableWeight <= 0) return 0;
  return Math.round((instance.trafficWeight / routableWeight) * 10_000) / 10_000;
}

/**
 * A reasoner record: one function of one node, with the versions serving it. `detail` adds the
 * schemas and examples (GET one reasoner); lists leave them out.
 */
export function reasonerView(
  fn: FunctionRef,
  serving: NodeInstanceRecord[],
  detail: true,
): ResponseBody<typeof ReasonerSchema>;
export function reasonerView(
  fn: FunctionRef,
  serving: NodeInstanceRecord[],
  detail: false,
): ResponseBody<typeof ReasonerSummarySchema>;
export function reasonerView(
  fn: FunctionRef,
  serving: NodeInstanceRecord[],
  detail: boolean,
): ResponseBody<typeof ReasonerSummarySchema> | ResponseBody<typeof ReasonerSchema> {
  const shown = describing(serving);
  const spec = functionsOf(shown, fn.type).find((f) => f.id === fn.name)!;
  const { total, routable } = weights(serving);
  return {
    id: fn.id,
    type: fn.type,
    name: fn.name,
    node_id: fn.nodeId,
    group_id: fn.nodeId,
    description: spec.description ?? null,
    tags: spec.tags ?? [],
    ...(detail
      ? {
          input_schema: spec.input_schema ?? null,
          output_schema: spec.output_schema ?? null,
          examples: spec.examples ?? [],
          described_by_version: shown.version,
        }
      : {}),
    status: bestStatus(serving),
    routable: serving.some(isRoutable),
    versions: serving.map((i) => i.version),
    total_weight: total,
    routable_weight: routable,
  };
}

/** Every function of a node's instances, each with the instances serving it, in registration order. */
export function functionsOfNode(instances: NodeInstanceRecord[]): Array<{
  fn: FunctionRef;
  serving: NodeInstanceRecord[];
}> {
  const found = new Map<string, { fn: FunctionRef; serving: NodeInstanceRecord[] }>();
  for (const type of ['reasoner', 'skill'] as const) {
    for (const instance of instances) {
      for (const spec of functionsOf(instance, type)) {
        const id = functionId(instance.nodeId, type, spec.id);
        const entry = found.get(id);
        if (entry) entry.serving.push(instance);
        else found.set(id, { fn: { nodeId: instance.nodeId, type, name: spec.id, id }, serving: [instance] });
      }
    }
  }
  return [...found.values()];
}

/** One version (instance) of a node, with its weight and the share of traffic it gets now. */
export function versionView(
  instance: NodeInstanceRecord,
  routableWeight: number,
  context: ViewContext,
): ResponseBody<typeof VersionSchema> {
  return {
    node_id: instance.nodeId,
    version: instance.version,
    traffic_weight: instance.trafficWeight,
    traffic_share: shareOf(instance, routableWeight),
    routable: isRoutable(instance),
    status: instance.lifecycleStatus,
    status_reason: instance.statusReason,
    status_changed_at: instance.statusChangedAt,
    admin_state: instance.adminState,
    base_url: instance.baseUrl,
    last_heartbeat: instance.lastHeartbeat,
    registered_at: instance.registeredAt,
    updated_at: instance.updatedAt,
    functions: functionIdsOf(instance),
    health: healthView(instance, context.now, context.staleThresholdMs),
  };
}

/** The versions of a node, or of the ones serving one function (`fn`). */
export function versionsView(
  nodeId: string,
  fn: FunctionRef | null,
  scope: NodeInstanceRecord[],
  context: ViewContext,
): ResponseBody<typeof VersionListSchema> {
  const { total, routable } = weights(scope);
  return {
    id: fn ? fn.id : nodeId,
    type: fn ? fn.type : 'node',
    node_id: nodeId,
    total_weight: total,
    routable_weight: routable,
    versions: scope.map((i) => versionView(i, routable, context)),
  };
}

/** A group: one node id with all its versions, their functions and weights. */
export function groupView(instances: NodeInstanceRecord[]): ResponseBody<typeof GroupSchema> {
  const { total, routable } = weights(instances);
  const nodeId = instances[0]!.nodeId;
  return {
    id: nodeId,
    node_id: nodeId,
    status: bestStatus(instances),
    routable: instances.some(isRoutable),
    total_weight: total,
    routable_weight: routable,
    functions: functionsOfNode(instances).map(({ fn }) => fn.id),
    versions: instances.map((i) => ({
      version: i.version,
      status: i.lifecycleStatus,
      admin_state: i.adminState,
      routable: isRoutable(i),
      traffic_weight: i.trafficWeight,
      traffic_share: shareOf(i, routable),
      last_heartbeat: i.lastHeartbeat,
      functions: functionIdsOf(i),
    })),
  };
}
