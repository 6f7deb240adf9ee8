/**
 * The approvals pages show what runs, and a reader can run each of them twice. Each page's
 * ```bash blocks are run in a real shell, in page order, against a control-plane process of its
 * own (a fresh database) and the example agent of the repository,
 * examples/approval-agent/agent.mjs, started as the pages start it; each answer must have the
 * shape of the ```json (or ```text) block the page shows after the command
 * (tests/support/page-commands.ts: same keys and values, except timestamps, measured durations
 * and ids, which are paired). The agent really pauses: the decision the page posts reaches it on
 * its callback_url, and it reports the result the page shows. Then the page runs again against
 * the same control plane with the first agent still running: the agent started again must stop
 * with the one line the page shows for a port that is taken, and every answer must be the page's
 * again (the second execution asks for an approval id of its own, so its decision is not the
 * first one's).
 *
 * Substituted: `http://127.0.0.1:8080`, the control plane's default address, becomes the server
 * under test, and `127.0.0.1:8004`, the agent's, a free port (given to it as AGENT_PORT). The API
 * page says its control plane runs with SERVICE_APPROVAL_WEBHOOK_SECRET=my-approval-secret, and
 * so does its server here (its decision is signed with that secret, with openssl).
 *
 * Needs `curl`, `openssl` and `bash` on PATH.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import {
  type BackgroundCommand,
  type CommandExample,
  commandExamples,
  IdMap,
} from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const PAGE_AGENT = '127.0.0.1:8004';
const START_AGENT = 'node examples/approval-agent/agent.mjs';
const MEASURED = new Set(['duration_ms']);

/** The pages, each with how many commands it shows and the settings its page says its server has. */
const PAGES = {
  'content/concepts/approvals.md': { commands: 7, env: {} },
  'content/api/approvals.md': {
    commands: 9,
    env: { SERVICE_APPROVAL_WEBHOOK_SECRET: 'my-approval-secret' },
  },
} as const;

beforeAll(() => {
  for (const tool of ['curl', 'openssl']) {
    try {
      execFileSync('bash', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      throw new Error(
        `the approvals pages use ${tool}, which is not on PATH: install it (apt-get install ${tool})`,
      );
    }
  }
});

for (const [page, { commands, env }] of Object.entries(PAGES)) {
  describe(page, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let workDir: string;
    let agentPort: number;
    /** Every agent started; the first run's serves the second run and the tests after it. */
    const agents: BackgroundCommand[] = [];
    const examples = commandExamples(readFileSync(join(ROOT, page), 'utf8'));
    const localize = (text: string) =>
      text.split(PAGE_CONTROL_PLANE).join(server.url).split(PAGE_AGENT).join(`127.0.0.1:${agentPort}`);
    const where = (example: CommandExample) => `${page}:${example.command.line}`;

    /**
     * Runs every command of the page in order, the agent in a terminal of its own; with
     * `portTaken`, the agent of an earlier run still holds its port. Returns every problem found.
     */
    async function runPage(portTaken: boolean): Promise<string[]> {
      const runner = createPageRunner({ page, cwd: ROOT, localize, measured: MEASURED });
      const ids = new IdMap();
      const agentProblems: string[] = [];
      const signed: string[] = [];
      try {
        const problems = await runner.runAll(examples, ids, async (example, command) => {
          if (command === START_AGENT) {
            const started = await runner.startAgent(example, {
              env: { CONTROL_PLANE_URL: server.url, AGENT_PORT: String(agentPort) },
              portTaken,
            });
            agents.push(started.agent);
            agentProblems.push(...started.problems);
            return true;
          }
          // A signed decision: shell variables first, then the curl that sends them.
          if (/^BODY=/.test(command) && command.includes('\ncurl ')) {
            signed.push(...(await runner.runCurl(example, ids)));
            return true;
          }
          return false;
        });
        // Every page id met a real one: the commands that named them ran with real ids.
        const unpaired = [...ids.pairs.keys()].filter((shown) => !/^(exec|run)_|^\d+-\d+$/.test(shown));
        if (unpaired.length > 0) problems.push(`page ids paired with something else: ${unpaired.join(', ')}`);
        return [...agentProblems, ...problems, ...signed];
      } finally {
        await runner.stop();
      }
    }

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-approvals-pages-'));
      database = await throwawayDatabase('sy_approvals_pages');
      server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url, env });
      agentPort = await freePort();
    });

    afterAll(async () => {
      await Promise.all(agents.map((agent) => agent.stop()));
      await server?.stop();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      expect(examples.filter((e) => !e.shown).map(where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      const problems = await runPage(false);
      const output = agents.map((agent) => agent.output()).join('\n');
      expect(problems, `agent:\n${output}\ncontrol plane:\n${server.output()}`).toEqual([]);
    }, 120_000);

    it("runs again with the first run's agent still running: the agent started again says in one line that its port is taken, and every answer is the page's", async () => {
      const problems = await runPage(true);
      const output = agents.map((agent) => agent.output()).join('\n');
      expect(problems, `agents:\n${output}\ncontrol plane:\n${server.output()}`).toEqual([]);
    }, 120_000);

    it('runs the example agent to the end of the other decisions too', async () => {
      // After the page's own commands: the same agent, two more posts, rejected and request_changes.
      const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        return (await response.json()) as any;
      };
      const sign = (body: string): Record<string, string> => {
        if (!('SERVICE_APPROVAL_WEBHOOK_SECRET' in env)) return {};
        const ts = String(Math.floor(Date.now() / 1000));
        const hmac = execFileSync(
          'openssl',
          ['dgst', '-sha256', '-hmac', env.SERVICE_APPROVAL_WEBHOOK_SECRET, '-r'],
          {
            input: `${ts}.${body}`,
          },
        )
          .toString()
          .split(' ')[0];
        return { 'X-Service-Timestamp': ts, 'X-Service-Signature': `sha256=${hmac}` };
      };
      for (const [postId, decision, expected] of [
        ['rj-1', 'rejected', { status: 'failed', error: 'rejected by the reviewer: off-brand' }],
        [
          'rc-1',
          'request_changes',
          {
            status: 'succeeded',
            result: { post_id: 'rc-1', published: false, changes_requested: 'off-brand' },
          },
        ],
      ] as const) {
        const ack = await post('/api/v1/execute/async/publisher.publish_post', {
          input: { post_id: postId },
        });
        const waiting = await eventually(`${postId} waits`, async () => {
          const record = (await (
            await fetch(`${server.url}/api/v1/executions/${ack.execution_id}`)
          ).json()) as any;
          return record.status === 'waiting' ? record : undefined;
        });
        expect(waiting.waiting_for.approval_request_id).toBe(`post-${postId}-${ack.execution_id}`);
        const body = JSON.stringify({
          approval_request_id: waiting.waiting_for.approval_request_id,
          decision,
          feedback: 'off-brand',
        });
        const decided = await fetch(`${server.url}/api/v1/webhooks/approval`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...sign(body) },
          body,
        });
        expect(decided.status).toBe(200);
        const ended = await eventually(`${postId} ends`, async () => {
          const record = (await (
            await fetch(`${server.url}/api/v1/executions/${ack.execution_id}`)
          ).json()) as any;
          return ['succeeded', 'failed'].includes(record.status) ? record : undefined;
        });
        expect(ended).toMatchObject(expected);
      }
    }, 60_000);

    it('has the example agent ignore a repeated delivery of a decision it already acted on', async () => {
      // Delivery is at least once: the same decision may come again (its first 2xx was lost).
      // The agent must not take the repeat for a decision about work it lost (it would report
      // `failed`, racing its own report of the first).
      const ack = (await (
        await fetch(`${server.url}/api/v1/execute/async/publisher.publish_post`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input: { post_id: 'dup-1' } }),
        })
      ).json()) as any;
      await eventually('dup-1 waits', async () => {
        const record = (await (
          await fetch(`${server.url}/api/v1/executions/${ack.execution_id}`)
        ).json()) as any;
        return record.status === 'waiting' ? true : undefined;
      });
      const approvalId = `post-dup-1-${ack.execution_id}`;
      const delivery = JSON.stringify({
        execution_id: ack.execution_id,
        approval_request_id: approvalId,
        decision: 'approved',
        feedback: null,
      });
      const deliver = () =>
        fetch(`http://127.0.0.1:${agentPort}/webhooks/approval`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: delivery,
        });
      expect((await deliver()).status).toBe(200);
      expect((await deliver()).status).toBe(200);
      // The first run's agent holds the port and serves every request (the second one stopped).
      await agents[0]!.waitFor(`${approvalId}: repeated delivery of approved, already handled`);
      const ended = await eventually('dup-1 ends', async () => {
        const record = (await (
          await fetch(`${server.url}/api/v1/executions/${ack.execution_id}`)
        ).json()) as any;
        return ['succeeded', 'failed'].includes(record.status) ? record : undefined;
      });
      expect(ended).toMatchObject({ status: 'succeeded', result: { post_id: 'dup-1', published: true } });
    }, 60_000);
  });
}
