/**
 * `switchyard runs`, `run`, `cancel` and `retry-webhook`, the build run as a child process
 * against a real control plane (PGlite, or PostgreSQL when DATABASE_URL is set) with the first
 * example agent and an agent of this test on loopback that writes logs and notes, fails, or takes
 * its time, and a webhook receiver. Every command of content/reference/cli-runs.md runs as the
 * page shows.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, startCliSession, startTestAgent, type TestAgent } from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
let agent: TestAgent;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ event: string; execution_id: string }> = [];

beforeAll(async () => {
  session = await startCliSession({
    databasePrefix: 'sy_cli_runs',
    env: {
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
    },
  });
  await session.startExample('first-agent/agent.mjs', 'hello-agent');
  agent = await startTestAgent(session, 'runs-agent', {
    chatty: async (_input, headers) => {
      const id = String(headers['x-execution-id']);
      await session.api('POST', `/api/v1/executions/${id}/logs`, [
        { level: 'info', message: 'reading 2 documents' },
      ]);
      await session.api(
        'POST',
        '/api/ui/v1/executions/note',
        { message: 'asked the reviewer', tags: ['review'] },
        { 'X-Execution-ID': id },
      );
      return { done: true };
    },
    broken: async () => {
      throw new Error('disk full');
    },
    slow: async () => {
      await new Promise((done) => setTimeout(done, 20_000));
      return {};
    },
  });
  receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(200).end('{}');
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((done) => receiver?.close(done));
  await agent?.stop();
  await session?.stop();
});

const EXEC_ID = /exec_[0-9a-hjkmnp-tv-z]{26}/;

describe('content/reference/cli-runs.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage('content/reference/cli-runs.md', session.env, 5);
  });
});

describe('switchyard run', () => {
  it('shows the record, result, logs and notes', async () => {
    const id = (await session.cli(['call', 'runs-agent.chatty', '--async'])).stdout.trim();
    const { code, stdout } = await session.cli(['run', id, '--wait']);
    expect(code).toBe(0);
    expect(stdout).toContain(`execution:  ${id}\ntarget:     runs-agent.chatty\nstatus:     succeeded\n`);
    expect(stdout).toMatch(/\nLogs\n {2}\S+Z {2}info {2}reading 2 documents\n/);
    expect(stdout).toMatch(/\nNotes\n {2}\S+Z {2}asked the reviewer {2}\[review\]\n/);
    const json = JSON.parse((await session.cli(['run', id, '--json'])).stdout);
    expect(json.execution).toMatchObject({ execution_id: id, status: 'succeeded', result: { done: true } });
    expect(json.logs.map((l: any) => l.entry.message)).toEqual(['reading 2 documents']);
    expect(json.notes.map((n: any) => n.entry.message)).toEqual(['asked the reviewer']);
    expect(json.webhook_deliveries).toEqual([]);
  });

  it('shows the error of a failed execution', async () => {
    const failed = await session.cli(['call', 'runs-agent.broken']);
    const id = EXEC_ID.exec(failed.stderr)![0];
    const { code, stdout } = await session.cli(['run', id]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/status: {5}failed\n/);
    expect(stdout).toMatch(/error: {6}.*disk full/);
  });

  it('an unknown execution exits 1 with the problem', async () => {
    const { code, stderr } = await session.cli(['run', 'exec_00000000000000000000000000']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: Not found (404)');
  });
});

describe('switchyard runs', () => {
  it('filters by status, target, workflow, since and limit', async () => {
    await session.cli(['call', 'runs-agent.chatty', '--workflow', 'wf-runs-a']);
    await session.cli(['call', 'runs-agent.chatty', '--workflow', 'wf-runs-a']);
    await session.cli(['call', 'runs-agent.broken', '--workflow', 'wf-runs-b']);
    const byWorkflow = JSON.parse((await session.cli(['runs', '--workflow', 'wf-runs-a', '--json'])).stdout);
    expect(byWorkflow.executions.map((e: any) => e.target)).toEqual([
      'runs-agent.chatty',
      'runs-agent.chatty',
    ]);
    const failed = await session.cli([
      'runs',
      '--status',
      'failed',
      '--target',
      'runs-agent.broken',
      '--since',
      '1h',
    ]);
    const lines = failed.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'EXECUTION',
      'TARGET',
      'STATUS',
      'DURATION',
      'CREATED',
      'WORKFLOW',
    ]);
    expect(
      lines
        .slice(1)
        .every((line) => /^exec_\w+\s+runs-agent\.broken\s+failed\s+\d+ ms\s+\d+ s ago\s/.test(line)),
    ).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    const one = await session.cli(['runs', '--limit', '1', '--target', 'runs-agent.chatty']);
    expect(one.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(one.stderr).toContain('More match');
    const future = JSON.parse(
      (await session.cli(['runs', '--since', '2999-01-01T00:00:00Z', '--json'])).stdout,
    );
    expect(future.executions).toEqual([]);
  });

  it('a --since or --limit that cannot be parsed is bad usage: exit 2', async () => {
    for (const args of [
      ['--since', 'yesterday'],
      ['--limit', '0'],
      ['--status', 'done'],
    ]) {
      const { code, stdout } = await session.cli(['runs', ...args]);
      expect(code, args.join(' ')).toBe(2);
      expect(stdout).toBe('');
    }
  });
});

describe('switchyard cancel', () => {
  it('cancels a running execution, and a second cancel is a conflict', async () => {
    const id = (await session.cli(['call', 'runs-agent.slow', '--async'])).stdout.trim();
    await eventually('the slow execution runs', async () =>
      (await session.api('GET', `/api/v1/executions/${id}`)).status === 'running' ? true : undefined,
    );
    const { code, stdout } = await session.cli(['cancel', id]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${id} cancelled\n`);
    expect((await session.api('GET', `/api/v1/executions/${id}`)).status).toBe('cancelled');
    const again = await session.cli(['cancel', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error: Conflict (409)');
  });
});

describe('switchyard retry-webhook', () => {
  it('shows the delivery in run and sends it again', async () => {
    const id = (
      await session.cli([
        'call',
        'runs-agent.chatty',
        '--async',
        '--webhook',
        receiverUrl,
        '--webhook-secret',
        's3cret',
      ])
    ).stdout.trim();
    await eventually('the webhook is delivered', async () =>
      received.some((body) => body.execution_id === id) ? true : undefined,
    );
    await eventually('the delivery is recorded as delivered', async () => {
      const { stdout } = await session.cli(['run', id]);
      return /\n {2}whd_\w+\s+execution\.completed\s+delivered\s+1\s/.test(stdout) ? stdout : undefined;
    });
    const { code, stdout } = await session.cli(['retry-webhook', id]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^whd_\w+ pending: the delivery to http:\/\/127\.0\.0\.1:\d+\/hook is queued again\.\n$/,
    );
    await eventually('the webhook arrives a second time', async () =>
      received.filter((body) => body.execution_id === id).length === 2 ? true : undefined,
    );
  });
});
