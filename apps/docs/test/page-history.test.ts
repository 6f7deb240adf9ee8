import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUpdated } from '../src/lib/page-history.ts';

let root: string;

/** git in `cwd` with a fixed identity and, when given, the commit's date. */
function git(cwd: string, args: string[], date?: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Writer',
      GIT_AUTHOR_EMAIL: 'writer@example.com',
      GIT_COMMITTER_NAME: 'Writer',
      GIT_COMMITTER_EMAIL: 'writer@example.com',
      ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}),
    },
  }).trim();
}

function commit(repo: string, files: Record<string, string>, date: string): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    writeFileSync(path.join(repo, name), text);
  }
  git(repo, ['add', '--all']);
  git(repo, ['commit', '--quiet', '-m', `edit ${Object.keys(files).join(', ')}`], date);
}

/** What `git log -1` says of one file: the answer lastUpdated must give. */
function lastCommitOf(repo: string, name: string): string {
  return git(repo, ['log', '-1', '--format=%cI', '--', name]);
}

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'switchyard-page-history-'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('lastUpdated', () => {
  it("dates each page by its own file's last commit, in every directory, as git log -1 does", () => {
    const repo = path.join(root, 'full');
    mkdirSync(repo);
    git(repo, ['init', '--quiet', '--initial-branch=main']);
    commit(
      repo,
      { 'content/a.md': 'a1', 'content/b.md': 'b1', 'content/api/c.md': 'c1' },
      '2026-01-02T10:00:00+00:00',
    );
    commit(repo, { 'content/a.md': 'a2' }, '2026-03-04T11:00:00+00:00');
    commit(repo, { 'content/api/c.md': 'c2', 'README.md': 'r' }, '2026-05-06T12:00:00+00:00');
    // A file of the same name one level down must not date its namesake above.
    commit(repo, { 'content/api/b.md': 'nested b' }, '2026-07-08T13:00:00+00:00');
    writeFileSync(path.join(repo, 'content', 'draft.md'), 'never committed');

    const expected = {
      'content/a.md': '2026-03-04T11:00:00+00:00',
      'content/b.md': '2026-01-02T10:00:00+00:00',
      'content/api/c.md': '2026-05-06T12:00:00+00:00',
      'content/api/b.md': '2026-07-08T13:00:00+00:00',
    };
    for (const [name, date] of Object.entries(expected)) {
      expect(lastCommitOf(repo, name)).toBe(date);
      expect(lastUpdated(path.join(repo, name)), name).toBe(date);
    }
    expect(lastUpdated(path.join(repo, 'content', 'draft.md'))).toBeUndefined();
    expect(lastUpdated(path.join(repo, 'content', 'missing.md'))).toBeUndefined();
    expect(lastUpdated(undefined)).toBeUndefined();
  });

  it('dates a page by the merge that resolved it, and by its branch commit when a merge only brought it in', () => {
    const repo = path.join(root, 'merges');
    mkdirSync(repo);
    git(repo, ['init', '--quiet', '--initial-branch=main']);
    commit(repo, { 'docs/both.md': 'base', 'docs/branch-only.md': 'base' }, '2026-01-01T09:00:00+00:00');
    git(repo, ['checkout', '--quiet', '-b', 'topic']);
    commit(repo, { 'docs/both.md': 'topic', 'docs/branch-only.md': 'topic' }, '2026-02-01T09:00:00+00:00');
    git(repo, ['checkout', '--quiet', 'main']);
    commit(repo, { 'docs/both.md': 'main' }, '2026-03-01T09:00:00+00:00');
    try {
      git(repo, ['merge', '--quiet', 'topic'], '2026-04-01T09:00:00+00:00');
    } catch {
      // The conflict on both.md, resolved by hand in the merge commit.
    }
    writeFileSync(path.join(repo, 'docs', 'both.md'), 'resolved');
    git(repo, ['add', '--all']);
    git(repo, ['commit', '--quiet', '--no-edit'], '2026-04-01T09:00:00+00:00');

    expect(lastCommitOf(repo, 'docs/both.md')).toBe('2026-04-01T09:00:00+00:00');
    expect(lastCommitOf(repo, 'docs/branch-only.md')).toBe('2026-02-01T09:00:00+00:00');
    for (const name of ['docs/both.md', 'docs/branch-only.md']) {
      expect(lastUpdated(path.join(repo, name)), name).toBe(lastCommitOf(repo, name));
    }
  });

  it('gives no date outside git, or in a shallow clone whose one commit would date every page', () => {
    const plain = path.join(root, 'plain');
    mkdirSync(plain);
    writeFileSync(path.join(plain, 'page.md'), 'no git here');
    expect(lastUpdated(path.join(plain, 'page.md'))).toBeUndefined();

    const origin = path.join(root, 'origin');
    mkdirSync(origin);
    git(origin, ['init', '--quiet', '--initial-branch=main']);
    commit(origin, { 'docs/page.md': 'one' }, '2026-01-02T10:00:00+00:00');
    commit(origin, { 'docs/other.md': 'two' }, '2026-02-03T10:00:00+00:00');
    const shallow = path.join(root, 'shallow');
    git(root, ['clone', '--quiet', '--depth=1', `file://${origin}`, shallow]);
    expect(lastUpdated(path.join(shallow, 'docs', 'page.md'))).toBeUndefined();
  });
});
