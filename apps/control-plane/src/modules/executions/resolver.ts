import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import {
  type CompiledSchema,
  chooseWeighted,
  compileJsonSchema,
  InvalidSchemaError,
  isRoutable,
  listNodeInstances,
  NODES_TOPIC,
  type NodeInstanceRecord,
} from '../nodes/index.ts';
import type { Target } from './targets.ts';

/** Where one execution goes: the instance chosen by traffic weight, and how its function is called. */
export interface Route {
  instance: NodeInstanceRecord;
  target: Target;
}

/** How long a node's instance list is reused; node events clear it sooner (any replica's). */
const CACHE_MS = 2_000;
/** Retry-After of a 503 when no instance is routable: a heartbeat or two. */
const RETRY_AFTER_SECONDS = 5;

function functionsOf(instance: NodeInstanceRecord, type: Target['type']) {
  return type === 'skill' ? instance.skills : instance.reasoners;
}

function prefixInput(field: string): string {
  if (field === '(body)') return 'input';
  return field.startsWith('[') ? `input${field}` : `input.${field}`;
}

/**
 * Turns targets into instances. A node's instances are read once and kept for two seconds, or
 * until any node event (registration, status change, removal) on any replica clears them: the
 * hot path of every execute call then costs no query for routing.
 */
export function createResolver(deps: { db: Knex; events: EventBus; clock: Clock }) {
  const cache = new Map<string, { at: number; instances: NodeInstanceRecord[] }>();
  // Compiled input validators by function spec object: the objects live as long as the cached
  // instance list, so a validator is looked up without serialising its schema on every call. A
  // schema stored before a rule it breaks existed (a pattern the linear-time engine cannot run)
  // is kept as its error, so each call answers it without compiling again.
  const validators = new WeakMap<object, CompiledSchema | InvalidSchemaError>();
  // Counts node events: a read that was in flight when one arrived may hold the instances as
  // they were before it (an old traffic weight), so it is used once but not kept.
  let generation = 0;
  deps.events.subscribe(NODES_TOPIC, () => {
    generation += 1;
    cache.clear();
  });

  async function instancesOf(nodeId: string): Promise<NodeInstanceRecord[]> {
    const now = deps.clock.now();
    const cached = cache.get(nodeId);
    if (cached && now - cached.at < CACHE_MS) return cached.instances;
    const readAt = generation;
    const instances = await listNodeInstances(deps.db, { nodeId });
    if (readAt !== generation) return instances;
    if (cache.size > 10_000) cache.clear();
    cache.set(nodeId, { at: now, instances });
    return instances;
  }

  /** Instances of the target's node that offer its function; 404 when none does. */
  async function offering(target: Target): Promise<NodeInstanceRecord[]> {
    const instances = await instancesOf(target.nodeId);
    if (instances.length === 0) {
      throw new ProblemError(
        'not_found',
        `No node "${target.nodeId}" is registered. List nodes with GET /api/v1/discovery/capabilities.`,
      );
    }
    const offering = instances.filter((i) =>
      functionsOf(i, target.type).some((f) => f.id === target.functionName),
    );
    if (offering.length === 0) {
      const known = [...new Set(instances.flatMap((i) => functionsOf(i, target.type).map((f) => f.id)))];
      throw new ProblemError(
        'not_found',
        `Node "${target.nodeId}" has no ${target.type} "${target.functionName}"` +
          (known.length
            ? ` (its ${target.type}s: ${known.slice(0, 20).join(', ')})`
            : ` (it has no ${target.type}s)`) +
          '.',
      );
    }
    return offering;
  }

  return {
    /**
     * Picks the instance for a new execution: among ready instances offering the function, by
     * traffic weight. `pinned` (a version chosen earlier) wins while it is still routable. Throws
     * 404 for an unknown node or function and 503 with Retry-After when none is routable.
     */
    async route(target: Target, pinned?: string | null): Promise<Route> {
      const candidates = await offering(target);
      const kept = pinned ? candidates.find((i) => i.version === pinned && isRoutable(i)) : undefined;
      const instance = kept ?? chooseWeighted(candidates);
      if (!instance) {
        const states = candidates.map(
          (i) => `${i.version}: ${i.adminState === 'active' ? i.lifecycleStatus : i.adminState}`,
        );
        throw new ProblemError(
          'service_unavailable',
          `No instance of node "${target.nodeId}" can take executions now (${states.join(', ')}).`,
          {
            headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
            resolution: `Retry after ${RETRY_AFTER_SECONDS} seconds; an instance takes executions once it is ready with a traffic weight above 0.`,
          },
        );
      }
      return { instance, target };
    },

    /**
     * How a node registered a function its agent ran in process (a local call): `skill` when it
     * offers a skill of that id and no reasoner, else `reasoner`. 404 for an unknown node.
     */
    async localFunctionType(nodeId: string, functionName: string): Promise<'reasoner' | 'skill'> {
      const instances = await instancesOf(nodeId);
      if (instances.length === 0) {
        throw new ProblemError('not_found', `No node "${nodeId.slice(0, 200)}" is registered.`, {
          extensions: { errors: [{ field: 'agent_node_id', message: 'no node with this id is registered' }] },
        });
      }
      const offers = (type: Target['type']) =>
        instances.some((i) => functionsOf(i, type).some((f) => f.id === functionName));
      return offers('skill') && !offers('reasoner') ? 'skill' : 'reasoner';
    },

    /**
     * Validates an input against the chosen instance's `input_schema`: 400 listing each failing
     * field; 409 when the stored schema no longer compiles (registered before a rule that now
     * refuses it), so the agent must register again.
     */
    validateInput(route: Route, input: unknown): void {
      const spec = functionsOf(route.instance, route.target.type).find(
        (f) => f.id === route.target.functionName,
      );
      if (!spec?.input_schema) return;
      let compiled = validators.get(spec);
      if (!compiled) {
        try {
          compiled = compileJsonSchema(spec.input_schema);
        } catch (error) {
          if (!(error instanceof InvalidSchemaError)) throw error;
          compiled = error;
        }
        validators.set(spec, compiled);
      }
      if (compiled instanceof InvalidSchemaError) {
        throw new ProblemError(
          'conflict',
          `The input_schema that version ${route.instance.version} of node "${route.target.nodeId}" registered for ${route.target.text} cannot be used: ${compiled.message.slice(0, 500)}`,
          {
            resolution:
              'The agent must register again with an input_schema this control plane accepts (registration names what to change); until then calls to this function are refused.',
          },
        );
      }
      const errors = compiled
        .validate(input)
        .map((e) => ({ field: prefixInput(e.field), message: e.message }));
      if (errors.length === 0) return;
      throw new ProblemError(
        'invalid_request',
        `The input does not match the input_schema of ${route.target.text}: ${errors
          .slice(0, 20)
          .map((e) => `${e.field}: ${e.message}`)
          .join('; ')}`,
        { extensions: { errors } },
      );
    },
  };
}

export type Resolver = ReturnType<typeof createResolver>;
