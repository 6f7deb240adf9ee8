import { toIso } from '@switchyard/shared';
import type { Knex } from 'knex';
import { NODES_TOPIC, type NodeUpdatedEvent } from './events.ts';
import { type InstanceKey, lockInstance, updateInstanceIfRevision } from './repository.ts';
import type { NodeRuntime } from './runtime.ts';
import type { NodeInstanceRecord } from './schemas.ts';

/** The largest traffic weight an instance may have; every instance registers with 100. */
export const MAX_TRAFFIC_WEIGHT = 10_000;

/**
 * How long a weight change waits to see its own `node.updated` come back through the bus: on
 * PostgreSQL a replica's own events return through LISTEN, so its caches clear only then. The
 * execution resolver keeps a node's instances for 2 s at most, so waiting longer buys nothing.
 */
const ECHO_WAIT_MS = 2_000;

/**
 * Publishes `event` on the nodes topic and resolves once this process has received it (or after
 * {@link ECHO_WAIT_MS}). Subscribers are called in turn for one event, so by the time ours is,
 * every cache of this process that listens to the topic (execution resolver, discovery) has been
 * cleared: the caller can answer knowing its own replica routes by the new state.
 */
async function publishAndAwaitEcho(runtime: NodeRuntime, event: NodeUpdatedEvent): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const echoed = new Promise<boolean>((done) => {
    unsubscribe = runtime.events.subscribe(NODES_TOPIC, (received) => {
      if (
        received.type === event.type &&
        received.node_id === event.node_id &&
        received.version === event.version &&
        received.timestamp === event.timestamp
      ) {
        done(true);
      }
    });
    timer = setTimeout(() => done(false), ECHO_WAIT_MS);
    timer.unref();
  });
  try {
    await runtime.transitions.publish(event);
    return await echoed;
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

/**
 * Sets the traffic weight of one instance (0 to {@link MAX_TRAFFIC_WEIGHT}; 0 sends it no new
 * executions). Routing reads `node_instances`; the caches in front of it (the execution
 * resolver's per-node instance lists, discovery) are cleared on every replica by the
 * `node.updated` event this publishes, and this replica's before the function returns. Undefined
 * when the instance is not registered. Setting the weight it already has writes and announces
 * nothing.
 *
 * The write holds the instance's row lock: a weight does not depend on what else the row says,
 * so concurrent changes (a pipeline setting weights in parallel, on any replica) queue and each
 * is written, the last one staying. Read-then-compare-revision, as status transitions do, gave
 * up with an error after a few lost races.
 */
export async function setTrafficWeight(
  db: Knex,
  runtime: NodeRuntime,
  key: InstanceKey,
  weight: number,
): Promise<NodeInstanceRecord | undefined> {
  if (!Number.isInteger(weight) || weight < 0 || weight > MAX_TRAFFIC_WEIGHT) {
    throw new RangeError(`traffic weight must be an integer from 0 to ${MAX_TRAFFIC_WEIGHT}`);
  }
  const applied = await db.transaction(async (trx) => {
    const current = await lockInstance(trx, key);
    if (!current || current.evictedAt !== null) return undefined;
    if (current.trafficWeight === weight) return { record: current, written: false };
    const at = new Date(runtime.clock.now());
    const record = await updateInstanceIfRevision(trx, key, current.revision, { trafficWeight: weight }, at);
    // The row is locked, so its revision cannot have moved since it was read.
    return { record: record ?? current, written: record !== undefined };
  });
  if (!applied) return undefined;
  if (applied.written) {
    await publishAndAwaitEcho(runtime, {
      type: 'node.updated',
      node_id: applied.record.nodeId,
      version: applied.record.version,
      timestamp: toIso(runtime.clock.now()),
    });
  }
  return applied.record;
}
