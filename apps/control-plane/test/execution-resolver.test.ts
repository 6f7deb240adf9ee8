import type { TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResolver } from '../src/modules/executions/resolver.ts';
import { parseTarget } from '../src/modules/executions/targets.ts';
import { createInProcessEventBus } from '../src/platform/events/index.ts';
import {
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';

/**
 * The resolver keeps a node's instances for two seconds unless a node event clears them. A
 * weight change (connector PUT …/weight) publishes such an event; a read already in flight when
 * it arrives holds the weights from before, and must not be kept as if it were fresh.
 */
let cp: TestControlPlane;
let handle: TestDatabase;

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  cp = await startTestControlPlane({ handle });
});

afterAll(async () => {
  await cp?.close();
  // The control plane leaves a database it was handed open; on PostgreSQL this drops it.
  await handle?.close();
});

async function register(nodeId: string, version: string) {
  const response = await fetch(`${cp.base}/api/v1/nodes/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(registration(nodeId, 'http://127.0.0.1:9', { version })),
  });
  expect(response.ok).toBe(true);
}

describe('execution resolver cache', () => {
  it('does not keep instances read while a node event arrived: the next route sees the new weights', async () => {
    const nodeId = uniqueNodeId('resolver');
    await register(nodeId, '1.0.0');
    await register(nodeId, '2.0.0');
    await handle.db('node_instances').where({ node_id: nodeId }).update({ lifecycle_status: 'ready' });
    await handle
      .db('node_instances')
      .where({ node_id: nodeId, version: '2.0.0' })
      .update({ traffic_weight: 0 });

    const events = createInProcessEventBus();
    const resolver = createResolver({ db: handle.db, events, clock: Date });
    const target = parseTarget(`${nodeId}.summarize`);

    // A node event arrives while a route's read is in flight: its answer, the weights from
    // before, has come back from the database but has not reached the resolver yet.
    const onResponse = (_response: unknown, query: { sql?: string }) => {
      if (!query.sql?.includes('node_instances')) return;
      handle.db.removeListener('query-response', onResponse);
      void events.publish('nodes', {
        type: 'node.updated',
        node_id: nodeId,
        version: '2.0.0',
        timestamp: '',
      });
    };
    handle.db.on('query-response', onResponse);
    expect((await resolver.route(target)).instance.version).toBe('1.0.0');
    await handle
      .db('node_instances')
      .where({ node_id: nodeId, version: '1.0.0' })
      .update({ traffic_weight: 0 });
    await handle
      .db('node_instances')
      .where({ node_id: nodeId, version: '2.0.0' })
      .update({ traffic_weight: 100 });

    // No further event comes: only a fresh read can know 2.0.0 now takes all traffic.
    for (let i = 0; i < 20; i += 1) {
      expect((await resolver.route(target)).instance.version).toBe('2.0.0');
    }
    await events.close();
  });
});
