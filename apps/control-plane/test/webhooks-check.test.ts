import { describe, expect, it } from 'vitest';
import {
  checkWebhook,
  type HostLookup,
  type WebhookSettings,
  webhookSettings,
} from '../src/modules/webhooks/index.ts';
import { defaultSettings } from '../src/platform/config/load-config.ts';

/**
 * checkWebhook: the validation of an async execute request's `webhook` (content/concepts/webhooks.md). A
 * refusal is an answer (`registered: false` with the reason), never an exception.
 */

const strict: WebhookSettings = defaultSettings(webhookSettings);
const withHttp: WebhookSettings = { ...strict, webhookAllowHttp: true };
const permissive: WebhookSettings = { ...strict, webhookAllowHttp: true, webhookAllowPrivateNetworks: true };

/** DNS for names of the public internet, which this sandbox cannot resolve. */
const publicDns: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'rebind.example.com': ['93.184.216.34', '10.0.0.7'],
  'metadata.example.com': ['169.254.169.254'],
};
const lookup: HostLookup = async (host) => {
  const found = publicDns[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

/** A short name for a test input; hostile inputs cannot be serialised. */
function label(input: unknown): string {
  try {
    return String(JSON.stringify(input)).slice(0, 200);
  } catch {
    return typeof input;
  }
}

async function refused(input: unknown, settings = strict): Promise<string> {
  const check = await checkWebhook(input, settings, { lookup });
  expect(check.registered, label(input)).toBe(false);
  return check.registered ? '' : check.error;
}

describe('checkWebhook: shapes', () => {
  it('accepts an https URL with a secret and headers, and normalises the URL', async () => {
    const check = await checkWebhook(
      {
        url: 'https://HOOKS.example.com/switchyard?tenant=acme',
        secret: 's3cret',
        headers: { 'X-Tenant': 'acme' },
      },
      strict,
      { lookup },
    );
    expect(check).toEqual({
      registered: true,
      webhook: {
        url: 'https://hooks.example.com/switchyard?tenant=acme',
        secret: 's3cret',
        headers: { 'X-Tenant': 'acme' },
      },
    });
  });

  it('accepts a URL alone (no secret: unsigned), and null secret and headers as absent', async () => {
    expect(await checkWebhook({ url: 'https://93.184.216.34/hook' }, strict, { lookup })).toEqual({
      registered: true,
      webhook: { url: 'https://93.184.216.34/hook', headers: {} },
    });
    expect(
      await checkWebhook({ url: 'https://hooks.example.com/', secret: null, headers: null }, strict, {
        lookup,
      }),
    ).toEqual({
      registered: true,
      webhook: { url: 'https://hooks.example.com/', headers: {} },
    });
  });

  it('accepts exactly 20 headers of 512 characters', async () => {
    const headers = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`X-H${i}`.padEnd(512, 'a'), 'v'.repeat(512)]),
    );
    const check = await checkWebhook({ url: 'https://hooks.example.com/', headers }, strict, { lookup });
    expect(check.registered).toBe(true);
  });

  it('refuses what is not an object with a url', async () => {
    for (const input of [
      undefined,
      null,
      'https://hooks.example.com/',
      42,
      true,
      [],
      [{ url: 'https://x' }],
    ]) {
      expect(await refused(input)).toMatch(/^webhook must be an object/);
    }
    expect(await refused({})).toBe('webhook.url is required');
    expect(await refused({ secret: 'x' })).toBe('webhook.url is required');
    expect(await refused({ url: 42 })).toBe('webhook.url must be a string');
    expect(await refused({ url: { href: 'https://hooks.example.com/' } })).toBe(
      'webhook.url must be a string',
    );
    expect(await refused({ url: 'hooks.example.com/path' })).toMatch(/not an absolute URL/);
    expect(await refused({ url: 'https://hooks.example.com/', extra: 1 })).toMatch(/unknown member "extra"/);
  });

  it('refuses plain http unless webhook_allow_http is on, and any other scheme always', async () => {
    expect(await refused({ url: 'http://hooks.example.com/' })).toMatch(
      /must use https:\/\/.*webhook_allow_http/,
    );
    expect((await checkWebhook({ url: 'http://hooks.example.com/' }, withHttp, { lookup })).registered).toBe(
      true,
    );
    for (const url of [
      'ftp://hooks.example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'ws://hooks.example.com/',
    ]) {
      expect(await refused({ url }, permissive)).toMatch(/must use https:\/\//);
    }
  });

  it('refuses credentials in the URL and URLs over 2048 characters', async () => {
    expect(await refused({ url: 'https://user:pass@hooks.example.com/' })).toMatch(
      /may not contain credentials/,
    );
    expect(await refused({ url: 'https://user@hooks.example.com/' })).toMatch(/may not contain credentials/);
    const long = `https://hooks.example.com/${'a'.repeat(2049 - 'https://hooks.example.com/'.length)}`;
    expect(long.length).toBe(2049);
    expect(await refused({ url: long })).toMatch(/2049 characters; at most 2048/);
  });

  it('refuses a secret that is not a non-empty string of at most 512 characters the database can keep', async () => {
    const url = 'https://hooks.example.com/';
    expect(await refused({ url, secret: 12345 })).toBe('webhook.secret must be a string');
    expect(await refused({ url, secret: { key: 'x' } })).toBe('webhook.secret must be a string');
    expect(await refused({ url, secret: '' })).toMatch(/secret is empty/);
    expect(await refused({ url, secret: 's'.repeat(513) })).toMatch(/at most 512/);
    expect(await refused({ url, secret: 'a\u0000b' })).toMatch(/U\+0000 or a lone UTF-16 surrogate/);
    expect(await refused({ url, secret: 'a\ud800b' })).toMatch(/U\+0000 or a lone UTF-16 surrogate/);
    expect((await checkWebhook({ url, secret: 's'.repeat(512) }, strict, { lookup })).registered).toBe(true);
  });

  it('refuses 21 headers, a 513-character name or value, and non-string values', async () => {
    const url = 'https://hooks.example.com/';
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    expect(await refused({ url, headers: many })).toMatch(/has 21 headers; at most 20/);
    expect(await refused({ url, headers: { 'X-Long': 'v'.repeat(513) } })).toMatch(/at most 512 characters/);
    expect(await refused({ url, headers: { ['X'.repeat(513)]: 'v' } })).toMatch(/at most 512 characters/);
    expect(await refused({ url, headers: { 'X-Num': 5 } })).toMatch(/must be a string/);
    expect(await refused({ url, headers: ['X-A: b'] })).toMatch(/must be an object/);
    expect(await refused({ url, headers: 'X-A: b' })).toMatch(/must be an object/);
  });

  it('refuses header injection: CR or LF in a value, and names that are not tokens', async () => {
    const url = 'https://hooks.example.com/';
    for (const headers of [
      { 'X-A': 'ok\r\nX-Injected: yes' },
      { 'X-A': 'ok\nX-Injected: yes' },
      { 'X-A': 'nul\u0000byte' },
      { 'X-A\r\nX-B': 'v' },
      { 'X A': 'v' },
      { '': 'v' },
      { 'X-Ä': 'v' },
      { 'X:A': 'v' },
    ]) {
      expect(await refused({ url, headers })).toMatch(/is not a valid HTTP header/);
    }
  });

  it('refuses headers every delivery sets itself, framing headers and duplicates', async () => {
    const url = 'https://hooks.example.com/';
    for (const name of [
      'X-Service-Signature',
      'x-service-delivery-id',
      'Content-Type',
      'Host',
      'Content-Length',
      'Transfer-Encoding',
      'User-Agent',
    ]) {
      expect(await refused({ url, headers: { [name]: 'v' } })).toMatch(/may not set/);
    }
    expect(await refused({ url, headers: { 'X-Tenant': 'a', 'x-tenant': 'b' } })).toMatch(
      /names x-tenant twice/,
    );
  });

  it('keeps a header named __proto__ as a header, not a prototype', async () => {
    const input = JSON.parse('{"url":"https://hooks.example.com/","headers":{"__proto__":"v"}}');
    const check = await checkWebhook(input, strict, { lookup });
    expect(check.registered).toBe(true);
    if (check.registered) {
      expect(Object.keys(check.webhook.headers)).toEqual(['__proto__']);
      expect(Object.getPrototypeOf(check.webhook.headers)).toBe(Object.prototype);
    }
  });

  it('answers hostile input without throwing: deep nesting, throwing getters, proxies', async () => {
    let deep: unknown = 'https://hooks.example.com/';
    for (let i = 0; i < 100_000; i++) deep = { url: deep };
    expect(await refused(deep)).toBe('webhook.url must be a string');
    expect(await refused({ url: 'https://hooks.example.com/', headers: { 'X-A': deep } })).toMatch(
      /must be a string/,
    );
    const getter = Object.defineProperty({}, 'url', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(await refused(getter)).toBe('webhook could not be read as a JSON object');
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('boom');
        },
      },
    );
    expect(await refused(proxy)).toBe('webhook could not be read as a JSON object');
  });
});

describe('checkWebhook: addresses', () => {
  it('refuses loopback, private, link-local, unspecified, multicast and CGNAT literals', async () => {
    const cases: Array<[string, RegExp]> = [
      ['https://127.0.0.1/', /loopback/],
      ['https://127.1.2.3:8443/', /loopback/],
      ['https://2130706433/', /loopback/], // 127.0.0.1 as one number: the URL parser normalises it
      ['https://0x7f.1/', /loopback/],
      ['https://[::1]/', /loopback/],
      ['https://10.1.2.3/', /private/],
      ['https://172.16.0.1/', /private/],
      ['https://192.168.1.10/', /private/],
      ['https://169.254.169.254/latest/meta-data/', /linkLocal/],
      ['https://[fe80::1]/', /linkLocal/],
      ['https://[fd00::1]/', /uniqueLocal/],
      ['https://0.0.0.0/', /unspecified/],
      ['https://[::]/', /unspecified/],
      ['https://224.0.0.1/', /multicast/],
      ['https://100.64.0.1/', /carrierGradeNat/],
      ['https://[::ffff:127.0.0.1]/', /IPv4-mapped IPv6 address \(127\.0\.0\.1, loopback\)/],
      ['https://[::ffff:10.0.0.1]/', /IPv4-mapped IPv6 address \(10\.0\.0\.1, private\)/],
    ];
    for (const [url, reason] of cases) {
      const error = await refused({ url });
      expect(error, url).toMatch(reason);
      expect(error, url).toMatch(/only public addresses receive webhooks/);
    }
  });

  it('resolves names: localhost (real DNS), a name resolving to metadata, and one public and one private address', async () => {
    // localhost resolves through the system resolver (/etc/hosts): no fake here.
    const local = await checkWebhook({ url: 'https://localhost:8443/hook' }, strict);
    expect(local).toEqual({
      registered: false,
      error: expect.stringMatching(/host "localhost" resolves to a loopback address/),
    });
    expect(await refused({ url: 'https://metadata.example.com/' })).toMatch(
      /resolves to a linkLocal address/,
    );
    // One private address among public ones is enough to refuse: a connection may pick any.
    expect(await refused({ url: 'https://rebind.example.com/' })).toMatch(/resolves to a private address/);
    expect(await refused({ url: 'https://nowhere.invalid/' })).toMatch(/does not resolve/);
  });

  it('accepts public literals and names', async () => {
    for (const url of [
      'https://93.184.216.34/',
      'https://[2606:4700:4700::1111]/hook',
      'https://hooks.example.com:8443/x',
    ]) {
      expect((await checkWebhook({ url }, strict, { lookup })).registered, url).toBe(true);
    }
  });

  it('accepts loopback and private addresses when webhook_allow_private_networks is on', async () => {
    for (const url of [
      'http://127.0.0.1:9000/hook',
      'https://localhost/',
      'https://10.0.0.1/',
      'https://[::1]/',
    ]) {
      const check = await checkWebhook({ url }, permissive);
      expect(check.registered, url).toBe(true);
    }
    // The setting lifts the address rule only: http still needs its own setting.
    const settings = { ...strict, webhookAllowPrivateNetworks: true };
    expect(await refused({ url: 'http://127.0.0.1/' }, settings)).toMatch(/must use https/);
  });
});
