import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProblem } from '@switchyard/shared';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import type { Config } from '../src/config.ts';
import { defaultConfig } from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { checkApiKey, keysMatch, matchesPathPattern } from '../src/platform/http/auth.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { openApiValidatorOf } from './helpers/openapi.ts';

const KEY = 's3cret-key';
const PROTECTED = '/api/v1/discovery/capabilities';

let handle: TestDatabase;
const servers: Server[] = [];

async function serve(configure: (config: Config) => void): Promise<string> {
  const config = defaultConfig();
  configure(config);
  const server = createServer(createApp({ db: handle.db, config, log: silentLogger() }).callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

let base: string;

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  base = await serve((config) => {
    config.api.auth = { apiKey: KEY, skipPaths: ['/api/v1/discovery/open', '/public/*'] };
    // No dashboard build here: the dashboard's pages answer 503 saying how to build them.
    config.dashboard.dir = join(tmpdir(), 'no-dashboard-build-here');
  });
});

afterAll(async () => {
  for (const server of servers) await new Promise((done) => server.close(done));
  await handle.close();
});

async function expectUnauthorized(response: Response, detail: RegExp): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe('Bearer');
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = (await response.json()) as Record<string, unknown>;
  expect(isProblem(body)).toBe(true);
  expect(body.code).toBe('unauthorized');
  expect(body.detail).toMatch(detail);
  expect(JSON.stringify(body)).not.toContain(KEY);
  // The answer is the 401 the OpenAPI document declares (any problem document for unknown paths).
  const openapi = await openApiValidatorOf(base);
  const path = new URL(response.url).pathname;
  if (openapi.operationFor('GET', path)) {
    openapi.expectMatches({
      method: 'GET',
      path,
      status: 401,
      contentType: response.headers.get('content-type'),
      body,
    });
  } else {
    expect(openapi.check('/components/schemas/Problem', body)).toEqual([]);
  }
}

describe('API-key authentication (SERVICE_API_KEY set)', () => {
  it('answers 401 with WWW-Authenticate: Bearer when no carrier is present', async () => {
    await expectUnauthorized(await fetch(`${base}${PROTECTED}`), /needs the API key/);
  });

  it('accepts the key in X-API-Key and refuses a wrong or empty one', async () => {
    expect((await fetch(`${base}${PROTECTED}`, { headers: { 'X-API-Key': KEY } })).status).toBe(200);
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}`, { headers: { 'X-API-Key': 'nope' } }),
      /X-API-Key/,
    );
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}`, { headers: { 'X-API-Key': '' } }),
      /needs the API key/,
    );
  });

  it('passes over an empty X-API-Key or an empty bearer token to the next carrier', async () => {
    const emptyHeader = { 'X-API-Key': '' };
    expect(
      (await fetch(`${base}${PROTECTED}`, { headers: { ...emptyHeader, Authorization: `Bearer ${KEY}` } }))
        .status,
    ).toBe(200);
    expect((await fetch(`${base}${PROTECTED}?api_key=${KEY}`, { headers: emptyHeader })).status).toBe(200);
    expect(
      (await fetch(`${base}${PROTECTED}?api_key=${KEY}`, { headers: { Authorization: 'Bearer ' } })).status,
    ).toBe(200);
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}?api_key=wrong`, {
        headers: { ...emptyHeader, Authorization: 'Bearer  ' },
      }),
      /api_key query parameter/,
    );
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}`, { headers: { Authorization: 'Bearer ' } }),
      /needs the API key/,
    );
    // The same rule for raw requests (WebSocket upgrades), where header values are not trimmed.
    expect(
      checkApiKey(
        { headers: { 'x-api-key': '  ', authorization: `Bearer ${KEY}` }, queryKey: undefined },
        KEY,
      ),
    ).toEqual({
      ok: true,
    });
  });

  it('accepts the key as Authorization: Bearer and refuses a wrong one', async () => {
    expect((await fetch(`${base}${PROTECTED}`, { headers: { Authorization: `Bearer ${KEY}` } })).status).toBe(
      200,
    );
    expect(
      (await fetch(`${base}${PROTECTED}`, { headers: { Authorization: `bearer  ${KEY}` } })).status,
    ).toBe(200);
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}`, { headers: { Authorization: 'Bearer wrong' } }),
      /bearer token/,
    );
  });

  it('accepts the key as ?api_key= and refuses a wrong or repeated one', async () => {
    expect((await fetch(`${base}${PROTECTED}?api_key=${KEY}`)).status).toBe(200);
    await expectUnauthorized(await fetch(`${base}${PROTECTED}?api_key=wrong`), /api_key query parameter/);
    await expectUnauthorized(await fetch(`${base}${PROTECTED}?api_key=${KEY}&api_key=${KEY}`), /once/);
  });

  it('lets the first carrier present decide: X-API-Key, then Bearer, then api_key', async () => {
    // A wrong X-API-Key is not rescued by a right bearer token or query key.
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}?api_key=${KEY}`, {
        headers: { 'X-API-Key': 'wrong', Authorization: `Bearer ${KEY}` },
      }),
      /X-API-Key/,
    );
    // A wrong bearer token is not rescued by a right query key.
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}?api_key=${KEY}`, { headers: { Authorization: 'Bearer wrong' } }),
      /bearer token/,
    );
    // A right higher carrier wins over a wrong lower one.
    const response = await fetch(`${base}${PROTECTED}?api_key=wrong`, {
      headers: { 'X-API-Key': KEY, Authorization: 'Bearer wrong' },
    });
    expect(response.status).toBe(200);
  });

  it('passes over an Authorization header of another scheme to the query key', async () => {
    const basic = { Authorization: 'Basic dXNlcjpwYXNz' };
    expect((await fetch(`${base}${PROTECTED}?api_key=${KEY}`, { headers: basic })).status).toBe(200);
    await expectUnauthorized(await fetch(`${base}${PROTECTED}`, { headers: basic }), /Bearer scheme/);
  });

  it('protects unknown paths too, so they reveal nothing without the key', async () => {
    await expectUnauthorized(await fetch(`${base}/api/v1/nope`), /needs the API key/);
    const known = await fetch(`${base}/api/v1/nope`, { headers: { 'X-API-Key': KEY } });
    expect(known.status).toBe(404);
  });

  it('never requires the key on /api/v1/health, /metrics, /api/v1/openapi.json and paths under /ui/', async () => {
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
    expect((await fetch(`${base}/api/v1/openapi.json`)).status).toBe(200);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('service_discovery_requests_total');
    // The dashboard's pages answer without the key: here there is no build, so 503 saying how to
    // build it (never 401), and /ui redirects to /ui/.
    expect((await fetch(`${base}/ui/`)).status).toBe(503);
    expect((await fetch(`${base}/ui/nodes/x`)).status).toBe(503);
    expect((await fetch(`${base}/ui`, { redirect: 'manual' })).status).toBe(301);
  });

  it('keeps the open paths open in any letter case, as the routers match them', async () => {
    expect((await fetch(`${base}/API/V1/Health`)).status).toBe(200);
    expect((await fetch(`${base}/METRICS`)).status).toBe(200);
    expect((await fetch(`${base}/UI/nodes`)).status).toBe(404);
    expect((await fetch(`${base}/Public/a`)).status).toBe(404);
    // Case-folding opens nothing new: protected routes stay protected in any case.
    await expectUnauthorized(await fetch(`${base}${PROTECTED.toUpperCase()}`), /needs the API key/);
    expect(matchesPathPattern('/API/V1/HEALTH/', ['/api/v1/health'])).toBe(true);
  });

  it('keeps /api/ui/v1 (the UI data API) behind the key', async () => {
    await expectUnauthorized(await fetch(`${base}/api/ui/v1/nodes`), /needs the API key/);
  });

  it('leaves /connector/* to connector-token auth: the API key neither protects nor unlocks it', async () => {
    const token = 'auth-test-connector-token';
    const withConnector = await serve((config) => {
      config.api.auth = { apiKey: KEY, skipPaths: [] };
      config.connector.token = token;
    });
    for (const prefix of ['/connector', '/api/v1/connector', '/CONNECTOR']) {
      const path = `${withConnector}${prefix}/reasoners`;
      // Not protected: the connector token alone opens it, without the API key.
      expect((await fetch(path, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
      // Not unlocked: the API key, in any carrier, is refused by the connector's own check.
      for (const headers of [{}, { 'X-API-Key': KEY }, { Authorization: `Bearer ${KEY}` }] as Array<
        Record<string, string>
      >) {
        const refused = await fetch(path, { headers });
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { detail: string }).detail).toMatch(/connector token/);
      }
      expect((await fetch(`${path}?api_key=${KEY}`)).status).toBe(401);
    }
    // With no connector token configured the API key still opens nothing there: 503, disabled.
    expect((await fetch(`${base}/connector/reasoners`, { headers: { 'X-API-Key': KEY } })).status).toBe(503);
    // And the connector token opens nothing outside the connector.
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}`, { headers: { Authorization: `Bearer ${token}` } }),
      /not the API key/,
    );
  });

  it('opens api.auth.skip_paths: exact paths and prefix/* patterns', async () => {
    expect((await fetch(`${base}/public`)).status).toBe(404);
    expect((await fetch(`${base}/public/a/b`)).status).toBe(404);
    expect((await fetch(`${base}/api/v1/discovery/open`)).status).toBe(404);
    await expectUnauthorized(await fetch(`${base}/publicity`), /needs the API key/);
    await expectUnauthorized(await fetch(`${base}/api/v1/discovery/open/more`), /needs the API key/);
  });

  it('does not let dot segments under an open prefix reach a protected route', async () => {
    const status = await new Promise<number>((done, fail) => {
      const url = new URL(base);
      const req = request(
        { host: url.hostname, port: url.port, path: `/ui/../${PROTECTED.slice(1)}`, method: 'GET' },
        (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        },
      );
      req.on('error', fail);
      req.end();
    });
    expect(status).toBe(404);
  });

  it('refuses an oversized key without trouble', async () => {
    await expectUnauthorized(
      await fetch(`${base}${PROTECTED}`, { headers: { 'X-API-Key': 'x'.repeat(8000) } }),
      /X-API-Key/,
    );
  });
});

describe('API key configured with surrounding whitespace', () => {
  it('is matched as the key without it, which is all a header can carry', async () => {
    // SERVICE_API_KEY from a secret file often ends in a newline; HTTP strips whitespace around
    // header values, so compared as configured no request could ever carry it.
    const padded = await serve((config) => {
      config.api.auth = { apiKey: ` ${KEY}\n`, skipPaths: [] };
    });
    const carriers: Array<Record<string, string>> = [
      { 'X-API-Key': KEY },
      { Authorization: `Bearer ${KEY}` },
    ];
    for (const headers of carriers) {
      expect((await fetch(`${padded}${PROTECTED}`, { headers })).status).not.toBe(401);
    }
    expect((await fetch(`${padded}${PROTECTED}?api_key=${KEY}`)).status).not.toBe(401);
    expect((await fetch(`${padded}${PROTECTED}`, { headers: { 'X-API-Key': 'x' } })).status).toBe(401);
  });
});

describe('API-key authentication off', () => {
  it('lets every request through when SERVICE_API_KEY is unset or empty', async () => {
    const open = await serve((config) => {
      config.api.auth = { apiKey: undefined, skipPaths: [] };
    });
    expect((await fetch(`${open}${PROTECTED}`)).status).toBe(200);
    expect((await fetch(`${open}${PROTECTED}`, { headers: { 'X-API-Key': 'anything' } })).status).toBe(200);
    const empty = await serve((config) => {
      config.api.auth = { apiKey: '', skipPaths: [] };
    });
    expect((await fetch(`${empty}${PROTECTED}`)).status).toBe(200);
  });
});

describe('auth helpers', () => {
  it('compares keys of any length', () => {
    expect(keysMatch(KEY, KEY)).toBe(true);
    expect(keysMatch(`${KEY}x`, KEY)).toBe(false);
    expect(keysMatch('', KEY)).toBe(false);
  });

  it('matches exact paths and prefix/* patterns, ignoring one trailing slash', () => {
    expect(matchesPathPattern('/a/b', ['/a/*'])).toBe(true);
    expect(matchesPathPattern('/a', ['/a/*'])).toBe(true);
    expect(matchesPathPattern('/ab', ['/a/*'])).toBe(false);
    expect(matchesPathPattern('/x/', ['/x'])).toBe(true);
    expect(matchesPathPattern('/x/y', ['/x'])).toBe(false);
  });

  it('checks the carriers of a raw request the same way (for WebSocket upgrades)', () => {
    expect(checkApiKey({ headers: {}, queryKey: KEY }, KEY)).toEqual({ ok: true });
    expect(checkApiKey({ headers: { 'x-api-key': KEY }, queryKey: 'wrong' }, KEY)).toEqual({ ok: true });
    expect(checkApiKey({ headers: {}, queryKey: undefined }, KEY).ok).toBe(false);
  });
});
