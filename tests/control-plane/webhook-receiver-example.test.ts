/**
 * The webhook receiver of content/concepts/webhooks.md works as the page says. The test reads the
 * page, saves its ```js receiver as webhook-receiver.mjs and runs it with WEBHOOK_SECRET=s3cret as
 * the page does, then lets a real control plane deliver a real execution's webhook to it, and
 * checks the answers the page promises for a repeat, a wrong secret and a stale timestamp.
 *
 * The one substitution: the receiver's port 9000 becomes a free port (a developer's machine may
 * hold 9000). The control plane allows plain http:// and loopback webhook URLs here, as the page
 * says development setups do (`webhook_allow_http`, `webhook_allow_private_networks`).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutionAgent,
  startExecutionAgent,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { fencedBlocks } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const PAGE = fileURLToPath(new URL('../../content/concepts/webhooks.md', import.meta.url));
const SECRET = 's3cret';

let dir: string;
let database: ThrowawayDatabase;
let controlPlane: ControlPlaneProcess;
let receiver: RunningProcess;
let receiverUrl: string;
let agent: ExecutionAgent;

/** The page's receiver: the one ```js block that starts a server. */
function receiverCode(port: number): string {
  const blocks = fencedBlocks(readFileSync(PAGE, 'utf8')).filter(
    (block) => block.lang === 'js' && block.code.includes('createServer'),
  );
  expect(blocks, 'content/concepts/webhooks.md shows one receiver').toHaveLength(1);
  const code = blocks[0]!.code;
  expect(code).toContain('9000');
  return code.replaceAll('9000', String(port));
}

/** Posts a body signed as Switchyard signs it (HMAC-SHA256 of the raw bytes). */
async function post(body: object, secret = SECRET): Promise<{ status: number; text: string }> {
  const raw = JSON.stringify(body);
  const signature = createHmac('sha256', secret).update(raw).digest('hex');
  const response = await fetch(receiverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': `sha256=${signature}` },
    body: raw,
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-webhook-example-'));
  database = await throwawayDatabase('sy_webhook_example');
  const port = await freePort();
  writeFileSync(join(dir, 'webhook-receiver.mjs'), receiverCode(port));
  receiver = startNode(['webhook-receiver.mjs'], {
    cwd: dir,
    env: { ...process.env, WEBHOOK_SECRET: SECRET },
  });
  await receiver.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
  receiverUrl = `http://127.0.0.1:${port}/`;
  controlPlane = await startControlPlaneProcess({
    dir,
    databaseUrl: database.url,
    env: {
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
  });
  agent = await startExecutionAgent({
    controlPlaneUrl: controlPlane.url,
    nodeId: `hook-agent-${randomBytes(3).toString('hex')}`,
    reasoners: { summarize: { kind: 'accept', result: { summary: 'Long report.' } } },
    heartbeatMs: 5_000,
  });
  await agent.register();
});

afterAll(async () => {
  await agent?.close();
  await controlPlane?.stop();
  await receiver?.stop();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the webhook receiver of the webhooks page', () => {
  it('accepts a signed delivery of a real execution, once', async () => {
    const response = await fetch(`${controlPlane.url}/api/v1/execute/async/${agent.nodeId}.summarize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        input: { text: 'Long report. Many sentences.' },
        webhook: { url: receiverUrl, secret: SECRET, headers: { 'X-Tenant': 'acme' } },
      }),
    });
    const ack = (await response.json()) as any;
    expect(response.status).toBe(202);
    expect(ack.webhook_registered).toBe(true);
    // The receiver prints `<event> <execution_id> <status>` once it has verified and processed it.
    const line = `execution.completed ${ack.execution_id} succeeded`;
    await eventually('the receiver processed the delivery', async () =>
      receiver.output().includes(line) ? true : undefined,
    );
    // The receiver prints before it answers, and the delivery is recorded once its 204 is back.
    const deliveries = await eventually('the delivery is recorded as delivered', async () => {
      const answer = (await (
        await fetch(`${controlPlane.url}/api/ui/v1/executions/${ack.execution_id}/webhook/deliveries`)
      ).json()) as any;
      return answer.deliveries[0]?.status === 'delivered' ? answer : undefined;
    });
    expect(deliveries.deliveries[0]).toMatchObject({ status: 'delivered' });
    expect(deliveries.deliveries[0].attempts[0]).toMatchObject({ status_code: 204 });
  });

  it('acknowledges a repeat without acting, and refuses a wrong secret and a stale timestamp', async () => {
    const body = {
      event: 'execution.completed',
      execution_id: 'exec_1',
      status: 'succeeded',
      delivery_id: `whd_test_${randomBytes(3).toString('hex')}`,
      timestamp: new Date().toISOString(),
    };
    expect(await post(body)).toEqual({ status: 204, text: '' });
    expect(await post(body)).toEqual({ status: 200, text: 'already processed' });
    expect(await post({ ...body, delivery_id: 'whd_test_other' }, 'wrong')).toEqual({
      status: 401,
      text: 'bad signature',
    });
    const stale = new Date(Date.now() - 6 * 60 * 1000).toISOString();
    expect(await post({ ...body, delivery_id: 'whd_test_stale', timestamp: stale })).toEqual({
      status: 401,
      text: 'stale timestamp',
    });
  });
});
