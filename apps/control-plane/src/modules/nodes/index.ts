/** Nodes: registration, heartbeats, presence, health monitoring, lifecycle and node events. */

export { agentUrl } from './agent-urls.ts';
export { nodeEventsRouter } from './event-routes.ts';
export { NODES_TOPIC, type NodeEvent } from './events.ts';
export { type CompiledSchema, compileJsonSchema, InvalidSchemaError } from './function-schemas.ts';
export { compareStatus, isRoutable } from './lifecycle.ts';
export { nodesOpenApi } from './openapi.ts';
export { listNodeInstances } from './repository.ts';
export { type RestartOutcome, requestRestart } from './restart.ts';
export { nodesRouter } from './routes.ts';
export { chooseWeighted } from './routing.ts';
export { createNodeRuntime, type NodeRuntime, type NodeRuntimeDeps } from './runtime.ts';
export type {
  LifecycleStatus,
  NodeInstance,
  NodeInstanceRecord,
  ReasonerSpec,
  SkillSpec,
} from './schemas.ts';
export { LIFECYCLE_STATUSES } from './schemas.ts';
export {
  type NodeHealthSettings,
  type NodeLifecycleSettings,
  nodeHealthSettings,
  nodeLifecycleSettings,
} from './settings.ts';
export { MAX_TRAFFIC_WEIGHT, setTrafficWeight } from './traffic.ts';
export { healthView } from './views.ts';
