/**
 * `switchyard memory get|set|delete|list|watch`, the build run as a child process against a real
 * control plane (PGlite, or PostgreSQL when DATABASE_URL is set). Every command of
 * content/reference/cli-memory.md runs as the page shows, `memory watch` running meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../support/child-process.ts';
import { type CliSession, startCli, startCliSession } from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
const watchers: RunningProcess[] = [];

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_memory' });
});

afterAll(async () => {
  await Promise.all(watchers.map((w) => w.stop('SIGKILL')));
  await session?.stop();
});

describe('content/reference/cli-memory.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage('content/reference/cli-memory.md', session.env, 7);
  });
});

describe('switchyard memory', () => {
  it('sets, gets, lists and deletes in a named scope, as the API stores them', async () => {
    const set = await session.cli([
      'memory',
      'set',
      'draft',
      '{"words": 412}',
      '--scope',
      'workflow',
      '--scope-id',
      'wf_9',
    ]);
    expect(set.stdout).toBe('draft set (workflow wf_9)\n');
    const stored = await session.api('POST', '/api/v1/memory/get', {
      key: 'draft',
      scope: 'workflow',
      scope_id: 'wf_9',
    });
    expect(stored.data).toEqual({ words: 412 });
    await session.cli(['memory', 'set', 'count', '3', '--scope', 'workflow', '--scope-id', 'wf_9']);
    await session.cli(
      ['memory', 'set', 'note', '--value-file', '-', '--scope', 'workflow', '--scope-id', 'wf_9'],
      {
        input: '"from stdin"',
      },
    );
    const list = JSON.parse(
      (await session.cli(['memory', 'list', '--scope', 'workflow', '--scope-id', 'wf_9', '--json'])).stdout,
    );
    expect(list.map((e: any) => [e.key, e.data])).toEqual([
      ['count', 3],
      ['draft', { words: 412 }],
      ['note', 'from stdin'],
    ]);
    const got = JSON.parse(
      (await session.cli(['memory', 'get', 'draft', '--scope', 'workflow', '--scope-id', 'wf_9', '--json']))
        .stdout,
    );
    expect(got).toMatchObject({ key: 'draft', data: { words: 412 }, scope: 'workflow', scope_id: 'wf_9' });
    const deleted = await session.cli([
      'memory',
      'delete',
      'draft',
      '--scope',
      'workflow',
      '--scope-id',
      'wf_9',
      '--json',
    ]);
    expect(JSON.parse(deleted.stdout)).toEqual({
      key: 'draft',
      scope: 'workflow',
      scope_id: 'wf_9',
      deleted: true,
    });
    const again = await session.cli([
      'memory',
      'delete',
      'draft',
      '--scope',
      'workflow',
      '--scope-id',
      'wf_9',
    ]);
    expect(again.stdout).toBe('draft was not set (workflow wf_9)\n');
  });

  it('a named scope without its id, or a value given two ways, is bad usage: exit 2', async () => {
    for (const args of [
      ['set', 'k', 'v', '--scope', 'session'],
      ['get', 'k', '--scope-id', 'x'],
      ['set', 'k', 'v', '--value-file', '-'],
      ['set', 'k'],
      ['list', '--scope', 'planet'],
    ]) {
      const { code, stdout } = await session.cli(['memory', ...args]);
      expect(code, args.join(' ')).toBe(2);
      expect(stdout).toBe('');
    }
  });

  it('watch keeps the keys matching its pattern and prints JSON lines', async () => {
    const watch = startCli(['memory', 'watch', 'user.*.prefs', '--json'], session.env);
    watchers.push(watch);
    await watch.waitFor(/memory events: live/);
    await session.cli(['memory', 'set', 'user.ada.prefs', '{"theme": "dark"}']);
    await session.cli(['memory', 'set', 'unrelated', '1']);
    await session.cli(['memory', 'delete', 'user.ada.prefs']);
    const lines = () =>
      watch
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
    await eventually('both changes arrive', async () => (lines().length >= 2 ? true : undefined));
    await new Promise((done) => setTimeout(done, 300));
    expect(lines().map((l) => [l.event, l.data.action, l.data.key, l.data.data])).toEqual([
      ['memory_change', 'set', 'user.ada.prefs', { theme: 'dark' }],
      ['memory_change', 'delete', 'user.ada.prefs', { theme: 'dark' }],
    ]);
    expect(lines()[0].id).toMatch(/^\d+-\d+$/);
    await watch.stop('SIGINT');
    expect(watch.child.exitCode).toBe(0);
  });
});
