/**
 * The replicas operations page: every command of content/operations/replicas.md runs. PostgreSQL
 * only: the page starts three replicas on one database, which the embedded one cannot serve.
 *
 * In a real shell, from the repository root, as the page says: the first block starts three
 * control-plane processes of the build at the same time on a fresh database (so all three
 * migrate it at once); once each answers its health check, the page's psql command lists three
 * live replicas in the shape the page shows. Then Ctrl-C (SIGINT to the job's process group, as
 * a terminal sends it) must stop all three gracefully: each ends its lease on the way out, which
 * the same psql command then shows as `f`.
 *
 * Substituted: the page's DATABASE_URL becomes the throwaway database, and ports 8081-8083 free
 * ones. Nothing else is. Needs `bash` and `psql` on PATH.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { fencedBlocks, runShell, shellEnv } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { operationsPage, ROOT } from '../support/operations-pages.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const { page: PAGE, markdown: MARKDOWN } = operationsPage('replicas.md');
const PAGE_DATABASE_URL = 'postgres://switchyard:secret@127.0.0.1:5432/switchyard';
const PAGE_PORTS = ['8081', '8082', '8083'];
const POSTGRES = Boolean(process.env.DATABASE_URL);

let database: ThrowawayDatabase | undefined;
let shell: ChildProcess | undefined;
let shellExited: Promise<unknown> | undefined;

afterAll(async () => {
  // Only if the test failed before its own Ctrl-C: the job's group is this test's.
  if (shell && shell.exitCode === null && shell.signalCode === null) {
    try {
      process.kill(-shell.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
    await shellExited;
  }
  await database?.drop();
});

describe.skipIf(!POSTGRES)(`${PAGE} (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL'})`, () => {
  it('starts three replicas together, lists them alive, and Ctrl-C stops all three gracefully', {
    timeout: 120_000,
  }, async () => {
    const blocks = fencedBlocks(MARKDOWN);
    const bash = blocks.filter((b) => b.lang === 'bash');
    // The page's commands, each run below: a new one must be added here.
    expect(bash, 'the bash blocks of the page').toHaveLength(2);
    const [start, list] = bash as [(typeof bash)[0], (typeof bash)[0]];
    const shown = blocks[blocks.indexOf(list) + 1]!;
    expect(shown.lang, 'the psql output shown after the command').toBe('text');

    database = await throwawayDatabase('sy_replicas_page');
    const ports = await Promise.all(PAGE_PORTS.map(() => freePort()));
    let command = start.code;
    expect(command).toContain(PAGE_DATABASE_URL);
    command = command.replace(PAGE_DATABASE_URL, database.url!);
    expect(command).toContain(PAGE_PORTS.join(' '));
    command = command.replace(PAGE_PORTS.join(' '), ports.join(' '));

    // Its own process group, like a terminal's foreground job.
    let output = '';
    shell = spawn('bash', ['-c', command], {
      cwd: ROOT,
      env: shellEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    shell.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    shell.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    shellExited = new Promise((resolve) => shell!.once('exit', resolve));
    for (const port of ports) {
      await eventually(
        `the replica on port ${port} is healthy`,
        async () => {
          const response = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
          return response.status === 200 ? true : undefined;
        },
        () => output.slice(-5000),
      );
    }

    const psql = () => runShell(list.code, { cwd: ROOT, env: { DATABASE_URL: database!.url! } });
    const rowPattern = /^ rep_[0-9a-hjkmnp-tv-z]{26} \| +\d+ \| ([tf])$/;
    const rows = (stdout: string) => stdout.split('\n').filter((line) => rowPattern.test(line));
    // Every lease is taken before a replica answers its health check.
    const alive = await psql();
    expect(alive.code, alive.stderr).toBe(0);
    const header = (text: string) => text.split('\n')[0]!.replace(/\s+/g, ' ').trim();
    expect(header(alive.stdout)).toBe(header(shown.code));
    expect(rows(alive.stdout).map((line) => rowPattern.exec(line)![1])).toEqual(['t', 't', 't']);
    expect(alive.stdout).toContain('(3 rows)');
    expect(rows(shown.code), 'the page shows three live replicas').toHaveLength(3);

    // Ctrl-C.
    process.kill(-shell.pid!, 'SIGINT');
    await shellExited;
    for (const port of ports) {
      await eventually(`the replica on port ${port} has stopped`, async () => {
        try {
          await fetch(`http://127.0.0.1:${port}/api/v1/health`);
          return undefined;
        } catch {
          return true;
        }
      });
    }
    const stopped = await psql();
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(
      rows(stopped.stdout).map((line) => rowPattern.exec(line)![1]),
      `leases after Ctrl-C (graceful stops end them); the replicas printed:\n${output.slice(-5000)}`,
    ).toEqual(['f', 'f', 'f']);
  });
});
