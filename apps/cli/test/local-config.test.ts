import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Context } from '../src/context.ts';
import { CommandFailed } from '../src/failures.ts';
import { localConfigPath, readLocalConfig, writeLocalConfig } from '../src/local-config.ts';

const sink = { write: () => true };

describe('localConfigPath', () => {
  it('is SWITCHYARD_CONFIG_FILE, else under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(localConfigPath({ SWITCHYARD_CONFIG_FILE: '/tmp/a.json', XDG_CONFIG_HOME: '/x' })).toBe(
      '/tmp/a.json',
    );
    expect(localConfigPath({ XDG_CONFIG_HOME: '/x' })).toBe('/x/switchyard/config.json');
    expect(localConfigPath({ XDG_CONFIG_HOME: 'relative' })).toBe(
      path.join(homedir(), '.config', 'switchyard', 'config.json'),
    );
  });
});

describe('the config file', () => {
  it('is written readable by its owner only and read back', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sy-cli-')), 'nested', 'config.json');
    expect(readLocalConfig(file)).toEqual({});
    writeLocalConfig(file, { url: 'http://10.0.0.5:8080', 'api-key': 'k' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readLocalConfig(file)).toEqual({ url: 'http://10.0.0.5:8080', 'api-key': 'k' });
    expect(JSON.parse(readFileSync(file, 'utf8')).url).toBe('http://10.0.0.5:8080');
  });

  it('that is not JSON is an error that says what to do', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sy-cli-')), 'config.json');
    writeFileSync(file, '{nope');
    expect(() => readLocalConfig(file)).toThrow(CommandFailed);
  });
});

describe('where the CLI finds the control plane', () => {
  it('takes the flag, else the environment, else the file, else the default', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sy-cli-')), 'config.json');
    writeLocalConfig(file, { url: 'http://file:1', 'api-key': 'from-file' });
    const ctx = new Context({ SWITCHYARD_CONFIG_FILE: file, SWITCHYARD_URL: 'http://env:2' }, sink, sink);
    expect(ctx.urlSetting()).toEqual({ value: 'http://env:2', source: 'environment' });
    ctx.globals = { url: 'http://flag:3' };
    expect(ctx.urlSetting()).toEqual({ value: 'http://flag:3', source: 'flag' });
    const fromFile = new Context({ SWITCHYARD_CONFIG_FILE: file }, sink, sink);
    expect(fromFile.urlSetting()).toEqual({ value: 'http://file:1', source: 'config file' });
    expect(fromFile.apiKeySetting()).toEqual({ value: 'from-file', source: 'config file' });
    const none = new Context({ SWITCHYARD_CONFIG_FILE: `${file}.missing` }, sink, sink);
    expect(none.urlSetting()).toEqual({ value: 'http://127.0.0.1:8080', source: 'default' });
    expect(none.apiKey).toBeUndefined();
  });
});
