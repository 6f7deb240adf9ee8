import { isRoutable } from './lifecycle.ts';
import type { NodeInstanceRecord } from './schemas.ts';

/**
 * Picks the instance a new execution for `nodeId` goes to: among instances that are `ready`,
 * not stopped or shut down, and have a positive `traffic_weight`, at random in proportion to
 * the weights. Undefined when none qualifies. `random` returns a number in [0, 1).
 */
export function chooseWeighted(
  instances: NodeInstanceRecord[],
  random: () => number = Math.random,
): NodeInstanceRecord | undefined {
  const eligible = instances.filter(isRoutable);
  const total = eligible.reduce((sum, i) => sum + i.trafficWeight, 0);
  if (total <= 0) return undefined;
  let point = random() * total;
  for (const instance of eligible) {
    point -= instance.trafficWeight;
    if (point < 0) return instance;
  }
  return eligible[eligible.length - 1];
}
