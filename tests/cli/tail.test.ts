/**
 * `switchyard tail`, the build run as a child process against a real control plane (PGlite, or
 * PostgreSQL when DATABASE_URL is set) and an agent on loopback: live execution and node events,
 * filters, JSON lines, and a control-plane restart in the middle, after which every execution
 * event arrives exactly once, those of executions run while tail was disconnected included.
 * Every command of content/reference/cli-tail.md runs as the page shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../support/child-process.ts';
import {
  type CliSession,
  startCli,
  startCliSession,
  startTestAgent,
  type TestAgent,
} from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
const agents: TestAgent[] = [];
const tails: RunningProcess[] = [];

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_tail' });
  await session.startExample('first-agent/agent.mjs', 'hello-agent');
  agents.push(
    await startTestAgent(session, 'tail-agent', {
      echo: async (input) => input,
      broken: async () => {
        throw new Error('out of paper');
      },
    }),
  );
});

afterAll(async () => {
  await Promise.all(tails.map((tail) => tail.stop('SIGKILL')));
  for (const agent of agents) await agent.stop();
  await session?.stop();
});

/** Starts `switchyard tail <args>` and waits until its streams are live. */
async function tail(args: string[], streams = 2): Promise<RunningProcess> {
  const run = startCli(['tail', ...args], session.env);
  tails.push(run);
  await run.waitFor(
    streams === 2
      ? /execution events: live[\s\S]*node events: live|node events: live[\s\S]*execution events: live/
      : /execution events: live/,
  );
  return run;
}

/** The JSON lines a `tail --json` printed so far (its stdout lines that are objects). */
function jsonLines(run: RunningProcess): any[] {
  return run
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

describe('content/reference/cli-tail.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage('content/reference/cli-tail.md', session.env, 4);
  });
});

describe('switchyard tail', () => {
  it('prints execution and node events as lines for people', async () => {
    const run = await tail(['--node', 'tail-agent']);
    await session.cli(['call', 'tail-agent.broken']);
    await session.cli(['call', 'hello-agent.summarize', 'text=Not this one.']);
    await run.waitFor(/execution\.completed .*tail-agent\.broken .*failed .*out of paper/);
    agents.push(await startTestAgent(session, 'tail-agent', { echo: async (input) => input }, '2.0.0'));
    await run.waitFor(/node\.registered +tail-agent 2\.0\.0/);
    await run.waitFor(/node\.status_changed +tail-agent 2\.0\.0 +starting -> ready/);
    expect(run.output()).toMatch(
      /\d{2}:\d{2}:\d{2}\.\d{3} {2}execution\.started +tail-agent\.broken +exec_\w+ +running +on tail-agent/,
    );
    expect(run.output(), '--node leaves other nodes out').not.toContain('hello-agent');
    await run.stop('SIGINT');
    expect(run.child.exitCode).toBe(0);
  });

  it('--status keeps the events that report that status, --json prints one object a line', async () => {
    const run = await tail(['--status', 'failed', '--json']);
    await session.cli(['call', 'tail-agent.echo', 'a=1']);
    await session.cli(['call', 'tail-agent.broken']);
    await eventually('the failure arrives', async () => (jsonLines(run).length > 0 ? true : undefined));
    await new Promise((done) => setTimeout(done, 500));
    const lines = jsonLines(run);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      stream: 'executions',
      event: 'execution.completed',
      data: {
        target: 'tail-agent.broken',
        status: 'failed',
        error_message: expect.stringContaining('out of paper'),
      },
    });
    expect(lines[0].id).toMatch(/^\d+-\d+$/);
    await run.stop('SIGINT');
  });

  it('survives a control-plane restart without losing or repeating an execution event', async () => {
    const run = await tail(['--workflow', 'wf-restart', '--json'], 1);
    const call = async () => {
      const { stdout, code, stderr } = await session.cli([
        'call',
        'tail-agent.echo',
        '--workflow',
        'wf-restart',
        '--json',
      ]);
      expect(code, stderr).toBe(0);
      return JSON.parse(stdout).execution_id as string;
    };
    const before = [await call(), await call()];
    await eventually('tail shows the first executions', async () =>
      jsonLines(run).length === 4 ? true : undefined,
    );
    await session.restartControlPlane();
    // These run while tail is still waiting to reconnect.
    const after = [await call(), await call(), await call()];
    await eventually(
      'tail resumes and shows every execution',
      async () => (jsonLines(run).length >= 10 ? true : undefined),
      () => run.output(),
    );
    await new Promise((done) => setTimeout(done, 500));
    const lines = jsonLines(run);
    const seen = lines.map((line) => `${line.data.execution_id} ${line.event}`);
    expect(seen).toEqual(
      [...before, ...after].flatMap((id) => [`${id} execution.started`, `${id} execution.completed`]),
    );
    expect(new Set(lines.map((line) => line.id)).size, 'no event twice').toBe(lines.length);
    expect(run.output()).toMatch(/execution events: .*Reconnecting\./);
    expect(run.output()).toMatch(/execution events: resumed after \d+-\d+, none missed/);
    await run.stop('SIGINT');
  });

  it('a wrong API key ends tail with the problem and exit status 1', async () => {
    const run = startCli(['tail'], { ...session.env, SERVICE_API_KEY: 'wrong' });
    tails.push(run);
    const status = await run.exited;
    expect(status.code).toBe(1);
    expect(run.output()).toContain('error: The event stream was refused: Unauthorized (401)');
  });
});
