/**
 * A decision, once recorded, is never lost with the control plane. A real control-plane
 * process records a decision whose delivery the agent refuses (500: it is busy); the process is
 * SIGKILLed (no shutdown, nothing flushed) before the agent took it, and started again on the
 * same port and database. The delivery, kept in approval_requests, reaches the agent once it
 * answers again, exactly once with a 2xx, and the execution finishes with the agent's result.
 *
 * The agent is test/approvals-agent.ts of the control plane (a real HTTP server on 127.0.0.1 that
 * pauses like the TypeScript SDK). It sends one heartbeat only, so presence is given a long TTL:
 * the agent must not be taken for gone while the control plane is down.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalAgent, startApprovalAgent } from '../../apps/control-plane/test/approvals-agent.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ENV = {
  SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL: '10m',
  SWITCHYARD_NODE_LIFECYCLE_MAX_HEARTBEAT_TTL: '10m',
};

let dir: string;
let database: ThrowawayDatabase;
let server: ControlPlaneProcess | undefined;
let agent: ApprovalAgent | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-approvals-crash-'));
  database = await throwawayDatabase('sy_approvals_crash');
});

afterAll(async () => {
  await agent?.close();
  await server?.stop();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function json(path: string, init?: RequestInit): Promise<any> {
  const response = await fetch(`${server!.url}${path}`, init);
  return response.json();
}

describe('a recorded decision survives a control-plane crash', () => {
  it('is delivered after the restart, once, and the execution finishes', async () => {
    const port = await freePort();
    server = await startControlPlaneProcess({ dir, databaseUrl: database.url, port, env: ENV });
    // Refuses every decision until the test says otherwise.
    agent = await startApprovalAgent({
      controlPlaneUrl: server.url,
      nodeId: 'crash-publisher',
      failCallbacks: 1_000,
    });
    await agent.register();
    const ack = await json('/api/v1/execute/async/crash-publisher.publish', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { approval_id: 'crash-1' } }),
    });
    const id = ack.execution_id as string;
    await eventually('precondition: the execution waits', async () =>
      (await json(`/api/v1/executions/${id}`)).status === 'waiting' ? true : undefined,
    );
    const decided = await json('/api/v1/webhooks/approval', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approval_request_id: 'crash-1', decision: 'approved', feedback: 'go' }),
    });
    expect(decided).toMatchObject({ status: 'approved', execution_status: 'running' });
    await eventually('precondition: the agent refused the first delivery', async () =>
      agent!.callbacks.length > 0 ? true : undefined,
    );

    await server.kill();
    agent.failCallbacks = 0;
    server = await startControlPlaneProcess({ dir, databaseUrl: database.url, port, env: ENV });

    // On PostgreSQL a delivery the dead process held (mid-attempt) waits for its lease (15 s).
    const done = await eventually(
      'the execution finishes with the decision',
      async () => {
        const record = await json(`/api/v1/executions/${id}`);
        return record.status === 'succeeded' ? record : undefined;
      },
      () =>
        `agent callbacks: ${JSON.stringify(agent!.callbacks.map((c) => c.answered))}\n${server!.output()}`,
    );
    expect(done.result).toEqual({ decision: 'approved', feedback: 'go' });
    expect(agent.callbacks.filter((c) => c.answered === 200)).toHaveLength(1);
    expect(agent.callbacks.every((c) => c.body.approval_request_id === 'crash-1')).toBe(true);
    const status = await json(`/api/v1/executions/${id}/approval-status`);
    expect(status.callback).toMatchObject({ status: 'delivered', last_status_code: 200 });
  }, 120_000);
});
