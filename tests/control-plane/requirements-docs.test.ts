/**
 * What README.md, CONTRIBUTING.md and the quick start (content/getting-started/quickstart.md) say
 * a machine needs is what the repository asks for: the Node versions are the `engines` of the root
 * package.json, and README names every Debian package the test helpers install with apt-get (the
 * constants of tests/support/chromium.ts, nginx.ts, promtool.ts and zsh.ts); and a setting they tell a
 * reader to give the tests (README's "Or set" column, `NAME=… npm test` in their commands) reaches
 * the tests through `npm test`, which runs them under turbo: turbo hands a task only the environment
 * variables turbo.json names. Each would drift silently otherwise: nothing runs these sentences.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_PACKAGES } from '../support/chromium.ts';
import { NGINX_PACKAGES } from '../support/nginx.ts';
import { PROMETHEUS_PACKAGES } from '../support/promtool.ts';
import { PYTHON_PACKAGES } from '../support/python.ts';
import { ZSH_PACKAGES } from '../support/zsh.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The documents that tell a reader which Node to install. */
const NODE_DOCS = ['README.md', 'CONTRIBUTING.md', 'content/getting-started/quickstart.md'];
/** The helpers that install Debian packages, each with the constant that names them. */
const INSTALLERS = {
  'tests/support/chromium.ts': CHROMIUM_PACKAGES,
  'tests/support/nginx.ts': NGINX_PACKAGES,
  'tests/support/promtool.ts': PROMETHEUS_PACKAGES,
  'tests/support/zsh.ts': ZSH_PACKAGES,
  'tests/support/python.ts': PYTHON_PACKAGES,
};

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

function typescriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules') return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the Node versions README, CONTRIBUTING and the quick start name', () => {
  const engines: string = JSON.parse(read('package.json')).engines.node;
  // `^20.19.0 || ^22.12.0 || >=24.0.0`: lines with their minimum (20.19, 22.12), and an open end (24).
  const ranges = engines.split('||').map((range) => range.trim());
  const minimums = ranges.flatMap((range) => /^\^(\d+)\.(\d+)\.0$/.exec(range)?.slice(1, 3).join('.') ?? []);
  const openEnded = ranges.flatMap((range) => /^>=(\d+)\.0\.0$/.exec(range)?.[1] ?? []);

  it('reads every range of engines', () => {
    expect(minimums.length + openEnded.length).toBe(ranges.length);
  });

  for (const doc of NODE_DOCS) {
    it(`${doc} quotes engines and names the same versions in words`, () => {
      const paragraph = read(doc)
        .split(/\n\s*\n/)
        .find((text) => text.includes(`\`${engines}\``));
      expect(paragraph, `${doc} quotes \`${engines}\``).toBeDefined();
      // In words: each minimum as major.minor, each open end as its major; no other version.
      const words = paragraph!.replace(`\`${engines}\``, '');
      expect([...new Set(words.match(/\b\d+\.\d+\b/g))].sort()).toEqual([...minimums].sort());
      for (const major of openEnded) expect(words).toMatch(new RegExp(`\\b${major}\\b`));
    });
  }
});

describe('the Debian packages README says the tests install', () => {
  it('are installed only by the helpers this test reads', () => {
    const callers = typescriptFiles(join(ROOT, 'tests'))
      .filter((file) => /\bensureDebianPackages\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file))
      .filter((file) => file !== 'tests/support/debian-packages.ts');
    expect(callers.sort()).toEqual(Object.keys(INSTALLERS).sort());
  });

  for (const [helper, packages] of Object.entries(INSTALLERS)) {
    it(`include every package ${helper} installs`, () => {
      expect(read(helper)).toMatch(/packages: [A-Z_]+_PACKAGES,/);
      const readme = read('README.md');
      const missing = packages.filter((name) => !readme.includes(`\`${name}\``));
      expect(missing, 'packages README.md does not name').toEqual([]);
    });
  }
});

describe('the settings README and CONTRIBUTING tell a reader to give the tests', () => {
  /** Each workspace's test task as turbo would run it: the variables it hands the task. */
  const plan: {
    tasks: { taskId: string; environmentVariables: { specified: Record<string, string[] | null> } }[];
  } = JSON.parse(
    execFileSync('npx', ['turbo', 'run', 'test', '--dry=json'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
    }),
  );
  const testTasks = plan.tasks.filter((task) => task.taskId.endsWith('#test'));

  /** The backquoted variable names of README's "Or set" column (the packages table). */
  function orSetColumn(): string[] {
    const rows = read('README.md')
      .split('\n')
      .filter((line) => line.startsWith('|'));
    const header = rows.find((row) => row.includes('| Or set |'))!;
    const column = header.split('|').findIndex((cell) => cell.trim() === 'Or set');
    return rows
      .slice(rows.indexOf(header) + 2)
      .flatMap((row) =>
        [...(row.split('|')[column] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!),
      );
  }

  /** Variables set in front of `npm test` in a shell block of README or CONTRIBUTING. */
  function setBeforeNpmTest(): string[] {
    const text = read('README.md') + read('CONTRIBUTING.md');
    const lines = [...text.matchAll(/```(?:bash|sh)\n([\s\S]*?)```/g)].flatMap((block) =>
      block[1]!.split('\n'),
    );
    return lines.flatMap((line) => {
      const command = /^((?:[A-Z][A-Z0-9_]*=\S+\s+)+)npm test\b/.exec(line.trim());
      return command ? [...command[1]!.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!) : [];
    });
  }

  it('are found in both documents', () => {
    expect(orSetColumn()).toEqual(expect.arrayContaining(['CHROMIUM_PATH', 'NGINX_PATH']));
    expect(setBeforeNpmTest()).toEqual(expect.arrayContaining(['DATABASE_URL', 'CHROMIUM_PATH']));
    expect(testTasks.map((task) => task.taskId)).toContain('@switchyard/tests#test');
  });

  it('reach the tests of every workspace through npm test', () => {
    // PATH (README: "a `python3` on `PATH`") is one of the variables turbo hands every task.
    const settings = [...new Set([...orSetColumn(), ...setBeforeNpmTest()])].filter(
      (name) => name !== 'PATH',
    );
    for (const task of testTasks) {
      const { env, passThroughEnv } = task.environmentVariables.specified;
      const handed = new Set([...(env ?? []), ...(passThroughEnv ?? [])]);
      expect(
        settings.filter((name) => !handed.has(name)),
        `${task.taskId}: settings turbo.json does not hand the task`,
      ).toEqual([]);
    }
  });
});
