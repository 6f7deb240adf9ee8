import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTOR_CAPABILITIES } from '../src/modules/connector/index.ts';
import { createPostgresEventBus, type EventBus } from '../src/platform/events/index.ts';
import {
  call,
  startTestControlPlane,
  type TestControlPlane,
  type TestControlPlaneOptions,
  uniqueNodeId,
} from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';

/*
 * Weights set through the connector change live routing: two real agents on 127.0.0.1 register
 * one node id with two versions, and every execution's X-Routed-Version (and the agent that
 * really received it) follows the weights, on the replica that took the PUT and on another one
 * sharing the database whose routing cache was warm.
 */

const TOKEN = 'routing-test-token';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const N = 12;

const withConnector: TestControlPlaneOptions['config'] = (config) => {
  config.connector.token = TOKEN;
  config.connector.capabilities = [...CONNECTOR_CAPABILITIES];
};

let cp: TestControlPlane;
let replica: TestControlPlane;
const agents: ExecutionAgent[] = [];

beforeAll(async () => {
  cp = await startTestControlPlane({ config: withConnector });
  // Another replica: same database, the same bus (the in-process stand-in for LISTEN/NOTIFY).
  replica = await startTestControlPlane({ handle: cp.handle, events: cp.events, config: withConnector });
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  await replica?.close();
  await cp?.close();
});

/** Starts and registers an agent serving `work` (answering its version) for `nodeId`@`version`. */
async function agent(base: string, nodeId: string, version: string): Promise<ExecutionAgent> {
  const started = await startExecutionAgent({
    controlPlaneUrl: base,
    nodeId,
    version,
    reasoners: { work: { kind: 'answer', result: { version } } },
    heartbeatMs: 60_000,
  });
  agents.push(started);
  await started.register();
  return started;
}

/** Runs `count` synchronous executions on `base` and answers the routed versions. */
async function routedVersions(base: string, nodeId: string, count = N): Promise<string[]> {
  const versions: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await call(base, 'POST', `/api/v1/execute/${nodeId}.work`, { input: { i } });
    expect(answer.status).toBe(200);
    const routed = answer.headers.get('x-routed-version')!;
    // The header names the agent that really ran it.
    expect(answer.body.result).toEqual({ version: routed });
    versions.push(routed);
  }
  return versions;
}

async function setWeight(base: string, id: string, version: string, weight: number, prefix = '/connector') {
  const path = `${prefix}/reasoners/${id}/versions/${version}/weight`;
  const answer = await call(base, 'PUT', path, { weight }, BEARER);
  expect(answer.status).toBe(200);
  expect(answer.body.traffic_weight).toBe(weight);
  return answer.body;
}

describe('PUT …/weight changes live routing', () => {
  it('sends every execution to the weighted version at once, then to the other after a flip', async () => {
    const nodeId = uniqueNodeId('weights');
    const v1 = await agent(cp.base, nodeId, '1.0.0');
    const v2 = await agent(cp.base, nodeId, '2.0.0');
    // Both replicas route now, so both hold the node's instances (weights 100/100) in their caches.
    await routedVersions(cp.base, nodeId, 2);
    await routedVersions(replica.base, nodeId, 2);

    await setWeight(cp.base, nodeId, '1.0.0', 100);
    const zero = await setWeight(cp.base, nodeId, '2.0.0', 0);
    expect(zero).toMatchObject({ routable: false, traffic_share: 0 });
    const v2Before = v2.calls.length;
    expect(await routedVersions(cp.base, nodeId)).toEqual(Array(N).fill('1.0.0'));
    expect(await routedVersions(replica.base, nodeId)).toEqual(Array(N).fill('1.0.0'));
    expect(v2.calls).toHaveLength(v2Before);

    // The flip, through a function id and on the other prefix, from the other replica.
    await setWeight(replica.base, `${nodeId}.work`, '2.0.0', 100, '/api/v1/connector');
    await setWeight(replica.base, `${nodeId}.work`, '1.0.0', 0, '/api/v1/connector');
    const v1Before = v1.calls.length;
    expect(await routedVersions(cp.base, nodeId)).toEqual(Array(N).fill('2.0.0'));
    expect(await routedVersions(replica.base, nodeId)).toEqual(Array(N).fill('2.0.0'));
    expect(v1.calls).toHaveLength(v1Before);
  });

  it('answers 503 with Retry-After when every version is at weight 0, and routes again once one is not', async () => {
    const nodeId = uniqueNodeId('weights-zero');
    await agent(cp.base, nodeId, '1.0.0');
    await routedVersions(cp.base, nodeId, 1);
    await setWeight(cp.base, nodeId, '1.0.0', 0);
    const refused = await call(cp.base, 'POST', `/api/v1/execute/${nodeId}.work`, { input: {} });
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('service_unavailable');
    expect(refused.headers.get('retry-after')).toBe('5');
    await setWeight(cp.base, nodeId, '1.0.0', 1);
    expect(await routedVersions(cp.base, nodeId, 3)).toEqual(['1.0.0', '1.0.0', '1.0.0']);
  });

  it('shows the split in the versions record: shares follow the weights among routable versions', async () => {
    const nodeId = uniqueNodeId('weights-share');
    await agent(cp.base, nodeId, '1.0.0');
    await agent(cp.base, nodeId, '1.1.0');
    await setWeight(cp.base, nodeId, '1.0.0', 90);
    await setWeight(cp.base, nodeId, '1.1.0', 10);
    const versions = await call(cp.base, 'GET', `/connector/reasoners/${nodeId}/versions`, undefined, BEARER);
    expect(versions.body.versions.map((v: any) => [v.version, v.traffic_weight, v.traffic_share])).toEqual([
      ['1.0.0', 90, 0.9],
      ['1.1.0', 10, 0.1],
    ]);
    expect(versions.body).toMatchObject({ total_weight: 100, routable_weight: 100 });
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.runIf(databaseUrl)('weights across replicas over LISTEN/NOTIFY (needs DATABASE_URL)', () => {
  it('routes by the new weight on the replica that took the PUT as soon as it answers, and on the other once notified', async () => {
    const channelPrefix = `sy_conn_${randomBytes(4).toString('hex')}_`;
    const buses: EventBus[] = [
      createPostgresEventBus(databaseUrl!, { channelPrefix }),
      createPostgresEventBus(databaseUrl!, { channelPrefix }),
    ];
    const a = await startTestControlPlane({ handle: cp.handle, events: buses[0], config: withConnector });
    const b = await startTestControlPlane({ handle: cp.handle, events: buses[1], config: withConnector });
    try {
      const nodeId = uniqueNodeId('weights-pg');
      await agent(a.base, nodeId, '1.0.0');
      await agent(a.base, nodeId, '2.0.0');
      // Both replicas hold the node's instances (100/100) in their routing caches.
      await routedVersions(a.base, nodeId, 2);
      await routedVersions(b.base, nodeId, 2);
      await setWeight(a.base, nodeId, '2.0.0', 0);
      // A's own node.updated came back through LISTEN (clearing its cache) before the PUT answered.
      expect(await routedVersions(a.base, nodeId)).toEqual(Array(N).fill('1.0.0'));
      await expect
        .poll(async () => (await routedVersions(b.base, nodeId, 1))[0], { timeout: 10_000 })
        .toBe('1.0.0');
      expect(await routedVersions(b.base, nodeId)).toEqual(Array(N).fill('1.0.0'));
      // The flip: 2.0.0 only.
      await routedVersions(b.base, nodeId, 1);
      await setWeight(a.base, nodeId, '2.0.0', 100);
      await setWeight(a.base, nodeId, '1.0.0', 0);
      expect(await routedVersions(a.base, nodeId)).toEqual(Array(N).fill('2.0.0'));
      await expect
        .poll(async () => (await routedVersions(b.base, nodeId, 1))[0], { timeout: 10_000 })
        .toBe('2.0.0');
      expect(await routedVersions(b.base, nodeId)).toEqual(Array(N).fill('2.0.0'));
    } finally {
      await b.close();
      await a.close();
    }
  });
});
