/**
 * `switchyard doctor` and `switchyard completion`, the build run as a child process: against a
 * healthy control plane (PGlite, or PostgreSQL when DATABASE_URL is set) and the docs site's
 * front server (the docs build), against a control plane this test stopped, with a wrong key and
 * with a docs site that is not one. The completion scripts run in bash and zsh. Every command of
 * content/reference/cli-doctor.md runs as the page shows.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, runCli, startCliSession } from '../support/cli.ts';
import { startControlPlaneProcess } from '../support/control-plane-process.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';
import { ensureZsh, ZSH, ZSH_INSTALL_TIMEOUT_MS } from '../support/zsh.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
let docs: TestDocsServer;

beforeAll(async () => {
  docs = await startTestDocsServer();
  session = await startCliSession({ databasePrefix: 'sy_cli_doctor' });
});

afterAll(async () => {
  await session?.stop();
  await docs?.close();
});

describe('content/reference/cli-doctor.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage(
      'content/reference/cli-doctor.md',
      { ...session.env, SWITCHYARD_DOCS_URL: docs.url },
      4,
    );
  });
});

describe('switchyard doctor', () => {
  it('passes every check on a healthy setup, and --json says so', async () => {
    const { code, stdout } = await session.cli(['doctor', '--json', '--docs-url', docs.url]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c: any) => [c.name, c.status])).toEqual([
      ['control plane', 'ok'],
      ['database', 'ok'],
      ['clock', 'ok'],
      ['API key', 'ok'],
      ['docs site', 'ok'],
    ]);
  });

  it('points at a stopped control plane: exit 1, the URL and what to do', async () => {
    const dir = join(session.dir, 'stopped');
    mkdirSync(dir);
    const stopped = await startControlPlaneProcess({ dir, databaseUrl: undefined });
    await stopped.stop();
    const { code, stdout, stderr } = await runCli(['doctor'], { env: { SWITCHYARD_URL: stopped.url } });
    expect(code).toBe(1);
    expect(stdout).toMatch(
      new RegExp(`control plane +fail +Could not reach ${stopped.url}/api/v1/health: connect ECONNREFUSED`),
    );
    expect(stdout).toContain(`(now ${stopped.url}, from environment)`);
    expect(stdout).toMatch(/API key +skip/);
    expect(stderr).toBe('error: 1 check failed: control plane.\n');
  });

  it('says the key is refused, and that a docs URL is not a docs site', async () => {
    const { code, stdout } = await session.cli([
      'doctor',
      '--json',
      '--api-key',
      'wrong',
      '--docs-url',
      session.controlPlane.url,
    ]);
    expect(code).toBe(1);
    const checks = Object.fromEntries(JSON.parse(stdout).checks.map((c: any) => [c.name, c]));
    expect(checks['API key']).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('refused (from flag)'),
    });
    expect(checks['API key'].fix).toContain('SERVICE_API_KEY');
    expect(checks['docs site']).toMatchObject({ status: 'fail' });
    expect(checks['docs site'].detail).toContain('/api/v1/topics answered');
    expect(checks['control plane'].status).toBe('ok');
  });
});

describe('switchyard completion', () => {
  it('completes commands, subcommands and options in bash', async () => {
    const { code, stdout } = await runCli(['completion', 'bash']);
    expect(code).toBe(0);
    const script = join(session.dir, 'switchyard.bash');
    writeFileSync(script, stdout);
    const complete = (...words: string[]) =>
      execFileSync('bash', [
        '-c',
        `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _switchyard; echo "\${COMPREPLY[*]}"`,
      ])
        .toString()
        .trim();
    expect(complete('switchyard', 'ru')).toBe('runs run');
    expect(complete('switchyard', 'memory', 'w')).toBe('watch');
    expect(complete('switchyard', '--json', 'runs', '--st')).toBe('--status');
    expect(complete('switchyard', 'config', 're')).toBe('reload');
    expect(complete('switchyard', 'share', '--no')).toBe('--no-redact');
  });

  it(
    'completes in zsh, through the functions zsh calls',
    async () => {
      await ensureZsh();
      const { stdout } = await runCli(['completion', 'zsh']);
      const script = join(session.dir, '_switchyard');
      writeFileSync(script, stdout);
      expect(stdout.split('\n')[0]).toBe('#compdef switchyard');
      // zsh's own _describe, compadd and _files only run inside a completion widget: stand-ins print
      // what the script hands them.
      const complete = (...words: string[]) =>
        execFileSync(ZSH, [
          '-f',
          '-c',
          `_describe() { print -l -- \${(P)2}; }; compadd() { shift; print -l -- "$@"; }; _files() { print files; }
source ${script}
words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _switchyard`,
        ])
          .toString()
          .trim()
          .split('\n');
      expect(complete('switchyard', '')).toContain(
        'memory:Read, write, list and watch key-value memory, in the global scope or a named one.',
      );
      expect(complete('switchyard', 'memory', '')).toContain(
        'watch:Follow memory changes live until Ctrl-C; a dropped connection resumes after the last change seen, none lost.',
      );
      expect(complete('switchyard', 'runs', '--')).toEqual(
        expect.arrayContaining(['--status', '--since', '--json']),
      );
      expect(complete('switchyard', 'node', '')).toEqual(['files']);
    },
    ZSH_INSTALL_TIMEOUT_MS,
  );

  it('refuses another shell: bad usage', async () => {
    expect((await runCli(['completion', 'fish'])).code).toBe(2);
  });
});
