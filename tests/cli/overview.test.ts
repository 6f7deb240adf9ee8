/**
 * The CLI as content/reference/cli.md describes it: built in the checkout and run with npx,
 * packed and installed globally on its own, its settings file, its global options, its help and
 * its exit statuses. Every command of the page runs as the page shows.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { checkCliPage } from './cli-pages.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'sy-cli-overview-'));
const configFile = path.join(scratch, 'config.json');
const PAGE_CONFIG_FILE = '/home/me/.config/switchyard/config.json';

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Every command the CLI has, by its words. */
const COMMANDS = [
  ['nodes'],
  ['node'],
  ['weight'],
  ['call'],
  ['runs'],
  ['run'],
  ['cancel'],
  ['retry-webhook'],
  ['tail'],
  ['dag'],
  ['approvals'],
  ['approve'],
  ['reject'],
  ['memory'],
  ['memory', 'get'],
  ['memory', 'set'],
  ['memory', 'delete'],
  ['memory', 'list'],
  ['memory', 'watch'],
  ['share'],
  ['doctor'],
  ['completion'],
  ['config'],
  ['config', 'set'],
  ['config', 'unset'],
  ['config', 'show'],
  ['config', 'list'],
  ['config', 'get'],
  ['config', 'put'],
  ['config', 'reload'],
];

describe('switchyard', () => {
  it('has --help with an example on every command', async () => {
    for (const words of [[], ...COMMANDS]) {
      const { code, stdout } = await runCli([...words, '--help']);
      expect(code, words.join(' ')).toBe(0);
      expect(stdout, words.join(' ')).toMatch(/\nExamples:\n {2}\$ .*switchyard /);
    }
  });

  it('an unknown command or option is bad usage: status 2, nothing on stdout', async () => {
    for (const args of [['frobnicate'], ['nodes', '--bogus'], ['config', 'set', 'colour', 'red'], []]) {
      const { code, stdout, stderr } = await runCli(args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr.length, args.join(' ')).toBeGreaterThan(0);
      if (args.length) expect(stdout).toBe('');
    }
  });

  it('installs globally from its packed tarball and runs with nothing else installed', () => {
    const prefix = path.join(scratch, 'global');
    execFileSync('npm', ['pack', '-w', '@switchyard/cli', '--pack-destination', scratch, '--silent'], {
      cwd: ROOT,
    });
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'))!;
    expect(tarball).toBe('switchyard-cli-0.1.0.tgz');
    execFileSync(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--offline',
        '--no-audit',
        '--no-fund',
        path.join(scratch, tarball),
      ],
      {
        cwd: scratch,
        stdio: 'pipe',
      },
    );
    const bin = path.join(prefix, 'bin', 'switchyard');
    expect(existsSync(bin)).toBe(true);
    expect(readdirSync(path.join(prefix, 'lib', 'node_modules', '@switchyard', 'cli'))).not.toContain(
      'node_modules',
    );
    const version = execFileSync(bin, ['--version'], {
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
    });
    expect(version.toString()).toBe('0.1.0\n');
  });
});

describe('content/reference/cli.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage(
      'content/reference/cli.md',
      { SWITCHYARD_CONFIG_FILE: configFile, SERVICE_API_KEY: 'cli-test-key' },
      6,
      undefined,
      (text) => text.split(configFile).join(PAGE_CONFIG_FILE),
    );
  });
});
