/**
 * `switchyard call`, the build run as a child process against a real control plane (PGlite, or
 * PostgreSQL when DATABASE_URL is set): the first example agent, and an agent of this test on
 * loopback whose functions fail or take their time. Every command of
 * content/reference/cli-calls.md runs as the page shows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI_ENTRY,
  type CliSession,
  runCli,
  startCliSession,
  startTestAgent,
  type TestAgent,
} from '../support/cli.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
let agent: TestAgent;

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_calls' });
  await session.startExample('first-agent/agent.mjs', 'hello-agent');
  agent = await startTestAgent(session, 'calls-agent', {
    echo: async (input) => ({ echoed: input }),
    broken: async () => {
      throw new Error('the model quota is used up');
    },
    slow: async (input) => {
      await new Promise((done) => setTimeout(done, 1500));
      return { slept: true, input };
    },
  });
});

afterAll(async () => {
  await agent?.stop();
  await session?.stop();
});

const EXEC_ID = /^exec_[0-9a-hjkmnp-tv-z]{26}$/;

describe('switchyard call, synchronously', () => {
  it('prints the result on stdout and the execution on stderr, exit 0', async () => {
    const { code, stdout, stderr } = await session.cli([
      'call',
      'calls-agent.echo',
      'n=3',
      'text=a b',
      'ok=true',
    ]);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ echoed: { n: 3, text: 'a b', ok: true } });
    expect(stderr).toMatch(/^exec_[0-9a-z]{26} succeeded in \d+ ms\n$/);
  });

  it('takes the input from --input, a file, or standard input', async () => {
    const inline = await session.cli(['call', 'calls-agent.echo', '--input', '{"a":[1,2]}', '--json']);
    expect(JSON.parse(inline.stdout)).toMatchObject({
      status: 'succeeded',
      result: { echoed: { a: [1, 2] } },
    });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sy-cli-input-')), 'input.json');
    writeFileSync(file, '{"from": "file"}');
    const fromFile = await session.cli(['call', 'calls-agent.echo', '--input-file', file, '--json']);
    expect(JSON.parse(fromFile.stdout).result).toEqual({ echoed: { from: 'file' } });
    const fromStdin = await session.cli(['call', 'calls-agent.echo', '--input-file', '-', '--json'], {
      input: '{"from": "stdin"}',
    });
    expect(JSON.parse(fromStdin.stdout).result).toEqual({ echoed: { from: 'stdin' } });
  });

  it('--json prints exactly one document', async () => {
    const { stdout } = await session.cli(['--json', 'call', 'hello-agent.skill:word_count', 'text=a b c']);
    const body = JSON.parse(stdout);
    expect(body).toMatchObject({ status: 'succeeded', result: { words: 3, characters: 5 } });
    expect(body.execution_id).toMatch(EXEC_ID);
  });

  it('a failed execution exits 1 and names the execution to look at', async () => {
    const { code, stdout, stderr } = await session.cli(['call', 'calls-agent.broken']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^error: .+ \(502\): .*the model quota is used up/m);
    const id = /switchyard run (exec_\w+)/.exec(stderr)?.[1];
    expect(id, stderr).toMatch(EXEC_ID);
    const record = await session.api('GET', `/api/v1/executions/${id}`);
    expect(record.status).toBe('failed');
  });

  it('input the schema refuses, and an unknown target, exit 1 with the problem detail', async () => {
    const invalid = await session.cli(['call', 'hello-agent.summarize', 'text=']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      'error: Invalid request (400): The input does not match the input_schema',
    );
    expect(invalid.stderr).toContain('fix: Correct the value named in detail');
    const unknown = await session.cli(['call', 'nobody.nothing']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error: Not found (404): No node "nobody" is registered.');
  });

  it('input given two ways, or not a JSON object, is bad usage: exit 2, nothing sent', async () => {
    const before = (await session.api('GET', '/api/v1/executions?limit=500')).executions.length;
    for (const args of [
      ['--input', '{}', 'a=1'],
      ['--input', '[1]'],
      ['--input', '{nope'],
      ['novalue'],
      ['--webhook', 'http://127.0.0.1:1/hook'],
    ]) {
      const { code, stderr, stdout } = await session.cli(['call', 'calls-agent.echo', ...args]);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).toMatch(/^error: /);
      expect(stdout).toBe('');
    }
    expect((await session.api('GET', '/api/v1/executions?limit=500')).executions.length).toBe(before);
  });

  it('a control plane that cannot be reached exits 1, naming the URL and what to do', async () => {
    const { code, stderr } = await runCli(['call', 'calls-agent.echo'], {
      env: { SWITCHYARD_URL: 'http://127.0.0.1:65534' },
    });
    expect(code).toBe(1);
    expect(stderr).toContain('error: Could not reach http://127.0.0.1:65534/api/v1/execute/calls-agent.echo');
    expect(stderr).toContain('fix: is the control plane running at http://127.0.0.1:65534?');
  });
});

describe('switchyard call --async and --wait', () => {
  it('--async prints only the execution id, and the execution runs', async () => {
    const { code, stdout } = await session.cli(['call', 'calls-agent.echo', 'x=1', '--async']);
    expect(code).toBe(0);
    const id = stdout.trim();
    expect(id).toMatch(EXEC_ID);
    expect(stdout).toBe(`${id}\n`);
    const ack = JSON.parse((await session.cli(['call', 'calls-agent.echo', '--async', '--json'])).stdout);
    expect(ack).toMatchObject({ status: 'queued', target: 'calls-agent.echo', webhook_registered: false });
  });

  it('--wait follows a slow execution to its end and prints its result, with no spinner in a pipe', async () => {
    const { code, stdout, stderr } = await session.cli(['call', 'calls-agent.slow', 'k=v', '--wait']);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ slept: true, input: { k: 'v' } });
    expect(stderr).toMatch(/^exec_\w+ succeeded in \d\.\d s\n$/);
  });

  it('--wait draws a spinner with the status on a terminal', async () => {
    // script(1) (util-linux, in every Debian) runs the command on a pseudo-terminal. Not a
    // synchronous exec: the agent answering the call runs in this process.
    const command = `"${process.execPath}" "${CLI_ENTRY}" call calls-agent.slow --wait`;
    const { stdout: output } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, ...session.env },
    });
    expect(stripVTControlCharacters(output)).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] exec_\w{26}: (queued|running)/);
    expect(output).toContain('"slept": true');
  });

  it('--wait exits 1 when the execution fails, and --json prints its final record', async () => {
    const { code, stdout, stderr } = await session.cli(['call', 'calls-agent.broken', '--wait', '--json']);
    expect(code).toBe(1);
    const record = JSON.parse(stdout);
    expect(record).toMatchObject({ status: 'failed', target: 'calls-agent.broken' });
    expect(stderr).toContain(`error: ${record.execution_id} failed`);
  });

  it('--workflow groups the execution into that workflow', async () => {
    const { stdout } = await session.cli([
      'call',
      'calls-agent.echo',
      '--workflow',
      'wf-cli-calls',
      '--json',
    ]);
    expect(JSON.parse(stdout).workflow_id).toBe('wf-cli-calls');
  });
});

describe('content/reference/cli-calls.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage('content/reference/cli-calls.md', session.env, 4);
  });
});
