/**
 * The event-stream and webhook pages show what runs. Each page's ```bash blocks are run in a real
 * shell, in page order, against a control-plane process of its own (a fresh database), and each
 * answer must have the shape of the ```json block the page shows after the command
 * (tests/support/page-commands.ts: same keys and values, except timestamps, measured durations
 * and ids, which are paired). A `curl -N` stream keeps running while the commands after it run,
 * and must print the events the page shows.
 *
 * content/concepts/event-streams.md creates everything its stream shows with its own commands.
 * content/api/webhooks.md reads deliveries that exist before its first command: the test makes
 * them as a reader's setup would, with the first-agent example of the repository
 * (examples/first-agent/agent.mjs, registered and ready as `hello-agent`) and a real receiver on
 * 127.0.0.1. One execution's webhook is answered 503, then 204 (delivered on the second attempt);
 * two more are answered 503 to every attempt (dead-lettered). The page's execution ids stand for
 * the first and the newest of those.
 *
 * Substituted: `http://127.0.0.1:8080`, the control plane's default address, becomes the server
 * under test; the page's receiver `https://hooks.example.com/switchyard` becomes the receiver on
 * 127.0.0.1 (over plain http, on loopback: the server runs with execution_queue.webhook_allow_http
 * and webhook_allow_private_networks on, as local development does); the address of the page's
 * `tmp-node`, `http://127.0.0.1:8002`, becomes a port nothing listens on (the page's node has no
 * agent, and whatever a machine runs on 8002 must not answer its health probe). Nothing else is.
 *
 * Needs `curl` and `bash` on PATH.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { startControlPlaneProcess } from '../support/control-plane-process.ts';
import { commandExamples, type DerivedCheck, IdMap } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const PAGE_RECEIVER = 'https://hooks.example.com/switchyard';
const PAGE_TMP_NODE = 'http://127.0.0.1:8002';
const AGENT_SCRIPT = join(ROOT, 'examples/first-agent/agent.mjs');

/** The pages, each with how many commands it shows (a new one must be runnable: raise it then). */
const PAGES = {
  'content/concepts/event-streams.md': 3,
  'content/api/webhooks.md': 3,
} as const;

type Page = keyof typeof PAGES;

/** The execution the webhooks page reads and re-delivers: delivered on its second attempt. */
const PAGE_DELIVERED_EXECUTION = 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x';
/** The execution the webhooks page lists first in the dead-letter queue: the newest dead one. */
const PAGE_DEAD_EXECUTION = 'exec_9d4f2k7m1q5w8x3v6b0n4r7t2c';

/**
 * Durations, and how long a shutdown waited for a drain with nothing to drain (0 or 1 ms, as the
 * clock ticks).
 */
const MEASURED = new Set(['duration_ms', 'drain_waited_ms']);

/** A cursor is opaque, like an id: a string where the page shows one, null where the page shows null. */
const opaqueCursor: DerivedCheck = (actual, shown) => {
  if (shown.next_cursor === null) return actual.next_cursor === null ? undefined : 'expected null';
  return typeof actual.next_cursor === 'string' && actual.next_cursor !== ''
    ? undefined
    : `expected a cursor, got ${JSON.stringify(actual.next_cursor)}`;
};

/** What one page needs running before its first command, and how its addresses map onto it. */
interface PageWorld {
  localize(text: string): string;
  /** Page ids paired before the first command, with what the setup made. */
  ids: IdMap;
  /** What to print when something differs (the processes' output). */
  context(): string;
  stop(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1. Each delivery is answered with the next status of `script`,
 * then with `otherwise`; a 503 carries the body a receiver in maintenance might send.
 */
async function startReceiver() {
  const state = { script: [] as number[], otherwise: 204, received: 0 };
  const server: Server = createServer(async (req, res) => {
    for await (const _chunk of req) {
      // The body is read whole before answering, as a receiver verifying a signature does.
    }
    state.received += 1;
    const status = state.script.shift() ?? state.otherwise;
    if (status === 204) {
      res.statusCode = 204;
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'maintenance' }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/switchyard`,
    state,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

async function startEventStreamsWorld(dir: string, database: ThrowawayDatabase): Promise<PageWorld> {
  const server = await startControlPlaneProcess({ dir, databaseUrl: database.url });
  const nobody = `http://127.0.0.1:${await freePort()}`;
  return {
    localize: (text) => text.split(PAGE_CONTROL_PLANE).join(server.url).split(PAGE_TMP_NODE).join(nobody),
    ids: new IdMap(),
    context: () => `control plane:\n${server.output()}`,
    stop: async () => {
      await server.stop();
    },
  };
}

async function startWebhooksWorld(dir: string, database: ThrowawayDatabase): Promise<PageWorld> {
  const receiver = await startReceiver();
  const server = await startControlPlaneProcess({
    dir,
    databaseUrl: database.url,
    env: {
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
  });
  let agent: RunningProcess | undefined;
  const context = () =>
    `receiver got ${receiver.state.received} deliveries\nagent:\n${agent?.output()}\ncontrol plane:\n${server.output()}`;
  const stop = async () => {
    await agent?.stop();
    await server.stop();
    await receiver.close();
  };
  try {
    agent = startNode([AGENT_SCRIPT], {
      env: { PATH: process.env.PATH, CONTROL_PLANE_URL: server.url, AGENT_PORT: String(await freePort()) },
    });
    await eventually(
      'precondition: hello-agent turns ready',
      async () => {
        const response = await fetch(`${server.url}/api/v1/nodes/hello-agent`);
        const body = (await response.json()) as { lifecycle_status?: string };
        return response.status === 200 && body.lifecycle_status === 'ready' ? true : undefined;
      },
      context,
    );

    /** Runs hello-agent.summarize with a webhook to the receiver, as the concepts page registers one. */
    const executeWithWebhook = async (): Promise<string> => {
      const response = await fetch(`${server.url}/api/v1/execute/async/hello-agent.summarize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          input: { text: 'A long report.' },
          webhook: { url: receiver.url, secret: 's3cret', headers: { 'X-Tenant': 'acme' } },
        }),
      });
      const ack = (await response.json()) as { execution_id: string; webhook_registered: boolean };
      if (response.status !== 202 || !ack.webhook_registered) {
        throw new Error(
          `precondition: the execution was not queued with its webhook: ${JSON.stringify(ack)}`,
        );
      }
      return ack.execution_id;
    };
    const deliveryReaches = (executionId: string, status: 'delivered' | 'dead') =>
      eventually(
        `precondition: the webhook of ${executionId} is ${status}`,
        async () => {
          const response = await fetch(
            `${server.url}/api/ui/v1/executions/${executionId}/webhook/deliveries`,
          );
          const body = (await response.json()) as { deliveries: Array<{ status: string }> };
          return body.deliveries[0]?.status === status ? true : undefined;
        },
        context,
      );

    // One at a time, so each delivery meets the receiver's answers meant for it, and the dead
    // letters are made in the order the page lists them (newest first).
    receiver.state.script.push(503);
    receiver.state.otherwise = 204;
    const delivered = await executeWithWebhook();
    await deliveryReaches(delivered, 'delivered');
    receiver.state.otherwise = 503;
    await deliveryReaches(await executeWithWebhook(), 'dead');
    const newestDead = await executeWithWebhook();
    await deliveryReaches(newestDead, 'dead');
    // Back from maintenance: the page's re-delivery succeeds.
    receiver.state.otherwise = 204;

    const ids = new IdMap();
    ids.pair(PAGE_DELIVERED_EXECUTION, delivered);
    ids.pair(PAGE_DEAD_EXECUTION, newestDead);
    return {
      localize: (text) =>
        text.split(PAGE_CONTROL_PLANE).join(server.url).split(PAGE_RECEIVER).join(receiver.url),
      ids,
      context,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

const WORLDS: Record<Page, (dir: string, database: ThrowawayDatabase) => Promise<PageWorld>> = {
  'content/concepts/event-streams.md': startEventStreamsWorld,
  'content/api/webhooks.md': startWebhooksWorld,
};

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'the event-stream and webhook pages use curl, which is not on PATH: install it (apt-get install curl)',
    );
  }
});

for (const [page, commands] of Object.entries(PAGES) as Array<[Page, number]>) {
  describe(page, () => {
    let world: PageWorld | undefined;
    let database: ThrowawayDatabase;
    let workDir: string;
    const localize = (text: string) => world!.localize(text);
    const runner = createPageRunner({
      page,
      cwd: ROOT,
      localize,
      measured: MEASURED,
      derived: { next_cursor: opaqueCursor },
    });
    const examples = commandExamples(readFileSync(join(ROOT, page), 'utf8'));

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-streams-webhooks-pages-'));
      database = await throwawayDatabase('sy_streams_webhooks_pages');
      world = await WORLDS[page](workDir, database);
    });

    afterAll(async () => {
      await runner.stop();
      await world?.stop();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      expect(examples.filter((e) => !e.shown).map(runner.where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      const problems = await runner.runAll(examples, world!.ids);
      expect(problems, world!.context()).toEqual([]);
    }, 120_000);
  });
}
