import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_APP_DIR, defaultSettings, SETTINGS, settingsFromEnv } from '../../server/settings.ts';

/** The rows of the README's settings table (between its settings:start and settings:end markers). */
function readmeSettings(): Array<{ variable: string; shownDefault: string; effect: string }> {
  const readme = readFileSync(path.join(DOCS_APP_DIR, 'README.md'), 'utf8');
  const start = readme.indexOf('<!-- settings:start -->');
  const end = readme.indexOf('<!-- settings:end -->');
  expect(start, 'the README marks its settings table').toBeGreaterThan(-1);
  const rows = readme
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2); // the header and the delimiter row
  return rows.map((row) => {
    const cells = row
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    expect(cells, row).toHaveLength(3);
    return { variable: cells[0]!.replace(/^`|`$/g, ''), shownDefault: cells[1]!, effect: cells[2]! };
  });
}

describe('settings declared once', () => {
  it("the README's settings table lists exactly the declared variables, with their defaults and effects", () => {
    const documented = readmeSettings();
    expect(documented.map((row) => row.variable)).toEqual(SETTINGS.map((setting) => setting.env));
    for (const [i, setting] of SETTINGS.entries()) {
      const row = documented[i]!;
      expect(row.shownDefault, setting.env).toBe(setting.shownDefault ?? `\`${setting.default}\``);
      expect(row.effect, setting.env).toBe(setting.description);
    }
  });

  it('the settings reference page of the docs shows the same table as the README', () => {
    const readme = readFileSync(path.join(DOCS_APP_DIR, 'README.md'), 'utf8');
    const table = readme
      .slice(
        readme.indexOf('<!-- settings:start -->') + '<!-- settings:start -->'.length,
        readme.indexOf('<!-- settings:end -->'),
      )
      .trim();
    const page = readFileSync(path.join(DOCS_APP_DIR, '../../content/reference/settings.md'), 'utf8');
    expect(page).toContain(table);
  });

  it('declares every variable and option key once', () => {
    const envs = SETTINGS.map((setting) => setting.env);
    const keys = SETTINGS.map((setting) => setting.key);
    expect(new Set(envs).size).toBe(envs.length);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('parses the declared defaults when nothing is set', () => {
    expect(defaultSettings()).toMatchObject({
      port: 4321,
      host: '127.0.0.1',
      siteUrl: undefined,
      distDir: path.join(DOCS_APP_DIR, 'dist'),
      sharesEnabled: true,
      sharesMaxBytes: 1024 * 1024,
      rateLimit: 120,
      rateWindowSeconds: 60,
      trustedProxyHops: 0,
      logLevel: 'info',
      logFormat: 'auto',
      headersTimeoutMs: 20_000,
      shutdownGraceMs: 10_000,
    });
    expect(Object.keys(defaultSettings()).sort()).toEqual(SETTINGS.map((setting) => setting.key).sort());
  });

  it('reads each variable with its value schema; empty means the default', () => {
    expect(
      settingsFromEnv({
        DOCS_PORT: '0',
        SITE_URL: 'https://docs.example.com/base/',
        SHARES_ENABLED: 'off',
        DOCS_TRUST_PROXY: 'true',
        DOCS_SHUTDOWN_GRACE: '2m',
        DOCS_LOG_LEVEL: 'debug',
        DOCS_RATE_LIMIT: '',
      }),
    ).toMatchObject({
      port: 0,
      siteUrl: 'https://docs.example.com/base',
      sharesEnabled: false,
      trustedProxyHops: 1,
      shutdownGraceMs: 120_000,
      logLevel: 'debug',
      rateLimit: 120,
    });
    expect(settingsFromEnv({ DOCS_TRUST_PROXY: '3' }).trustedProxyHops).toBe(3);
  });

  it('refuses wrong values, naming every variable that is wrong', () => {
    expect(() =>
      settingsFromEnv({
        DOCS_PORT: '70000',
        SITE_URL: 'ftp://x',
        DOCS_LOG_LEVEL: 'loud',
        DOCS_TRUST_PROXY: 'maybe',
      }),
    ).toThrow(
      /DOCS_PORT: "70000" is not a whole number from 0 to 65535; SITE_URL: "ftp:\/\/x" is not an absolute http\(s\) URL; DOCS_TRUST_PROXY: .*; DOCS_LOG_LEVEL: "loud" is not one of/,
    );
  });
});
