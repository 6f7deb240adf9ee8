/**
 * The server half of `switchyard config` (list, get, put, reload), the build run as a child
 * process against a control plane started with SERVICE_CONFIG_SOURCE=db (PGlite, or PostgreSQL
 * when DATABASE_URL is set), and the local half (set, unset, show) with its config file. Every
 * command of content/reference/cli-config.md runs as the page shows.
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, runCli, startCliSession } from '../support/cli.ts';
import { startControlPlaneProcess } from '../support/control-plane-process.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_config', env: { SERVICE_CONFIG_SOURCE: 'db' } });
});

afterAll(async () => {
  await session?.stop();
});

describe('content/reference/cli-config.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage('content/reference/cli-config.md', session.env, 5);
  });
});

describe('switchyard config, the control plane half', () => {
  it('put stores a version, get --json shows it, list counts it, reload applies it', async () => {
    const text = 'discovery:\n  cache_ttl: 30s\n';
    const put = await session.cli(['config', 'put', 'control-plane', '-f', '-', '--json'], { input: text });
    expect(put.code, put.stderr).toBe(0);
    const first = JSON.parse(put.stdout);
    expect(first).toMatchObject({ name: 'control-plane', bytes: Buffer.byteLength(text) });
    const next = 'discovery:\n  cache_ttl: 45s\n';
    const again = await session.cli(['config', 'put', 'control-plane', '-f', '-'], { input: next });
    expect(again.stdout).toContain(`control-plane: version ${first.version + 1} stored`);
    const got = JSON.parse((await session.cli(['config', 'get', 'control-plane', '--json'])).stdout);
    expect(got).toMatchObject({ name: 'control-plane', version: first.version + 1, content: next });
    const list = JSON.parse((await session.cli(['config', 'list', '--json'])).stdout);
    expect(list.configs.map((c: any) => c.name)).toEqual(['control-plane']);
    const reload = JSON.parse((await session.cli(['config', 'reload', '--json'])).stdout);
    expect(reload.source).toBe('db');
    expect(reload.changed).toContain('discovery.cache_ttl');
  });

  it('an unknown configuration exits 1; a missing file is bad usage', async () => {
    const missing = await session.cli(['config', 'get', 'nothing']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error: Not found (404): No stored configuration named "nothing".');
    const noFile = await session.cli(['config', 'put', 'team', '-f', path.join(session.dir, 'absent.yaml')]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('Cannot read');
    expect((await session.cli(['config', 'put', 'team'])).code).toBe(2);
  });
});

describe('switchyard config reload on a control plane that reads no stored configuration', () => {
  it('exits 1 with the 503 detail and resolution', async () => {
    const dir = path.join(session.dir, 'file-only');
    mkdirSync(dir);
    const fileOnly = await startControlPlaneProcess({ dir, databaseUrl: undefined });
    try {
      const { code, stderr } = await runCli(['config', 'reload'], { env: { SWITCHYARD_URL: fileOnly.url } });
      expect(code).toBe(1);
      expect(stderr).toContain(
        'error: Service unavailable (503): Reload needs a server started with SERVICE_CONFIG_SOURCE=db',
      );
      expect(stderr).toContain('fix: Start the control plane with SERVICE_CONFIG_SOURCE=db');
    } finally {
      await fileOnly.stop();
    }
  });
});

describe('switchyard config, the local half', () => {
  it('set writes the file (owner only), show says where each setting comes from, unset removes it', async () => {
    const file = path.join(session.dir, 'local-config.json');
    const env = { SWITCHYARD_CONFIG_FILE: file };
    expect((await runCli(['config', 'set', 'url', session.controlPlane.url], { env })).code).toBe(0);
    expect((await runCli(['config', 'set', 'api-key', session.apiKey], { env })).code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      url: session.controlPlane.url,
      'api-key': session.apiKey,
    });
    // The file alone now reaches the control plane with its key.
    const listed = await runCli(['config', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const show = JSON.parse(
      (await runCli(['config', 'show', '--json', '--url', 'http://10.1.2.3:8080'], { env })).stdout,
    );
    expect(show.settings.url).toEqual({ value: 'http://10.1.2.3:8080', source: 'flag' });
    expect(show.settings['api-key']).toEqual({
      value: `(set, ${session.apiKey.length} characters)`,
      source: 'config file',
    });
    const unset = await runCli(['config', 'unset', 'api-key'], { env });
    expect(unset.stdout).toBe(`api-key removed (from ${file})\n`);
    const refused = await runCli(['config', 'list'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: Unauthorized (401)');
  });

  it('refuses settings it does not know and URLs that are not http(s): exit 2', async () => {
    const env = { SWITCHYARD_CONFIG_FILE: path.join(session.dir, 'other.json') };
    expect((await runCli(['config', 'set', 'colour', 'red'], { env })).code).toBe(2);
    const ftp = await runCli(['config', 'set', 'docs-url', 'ftp://docs'], { env });
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain('docs-url must be an http or https URL');
  });
});
