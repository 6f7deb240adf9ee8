import { createServer, request as httpRequest } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { createInProcessEventBus } from '../src/platform/events/index.ts';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';

const MiB = 1024 * 1024;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let cp: TestControlPlane;

beforeAll(async () => {
  cp = await startTestControlPlane();
});

afterAll(async () => {
  await cp.close();
});

beforeEach(async () => {
  await cp.handle.db('configs').delete();
  await cp.handle.db('config_versions').delete();
});

/** A PUT of raw text (or bytes) as curl --data-binary sends it. */
function put(name: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return fetch(`${cp.base}/api/v1/configs/${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'text/yaml', ...headers },
    body,
  });
}

async function putJson(name: string, body: string, headers: Record<string, string> = {}) {
  const response = await put(name, body, headers);
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/** A PUT through call(), so the answer is also held to the OpenAPI document. */
function putChecked(name: string, body: string, headers: Record<string, string> = {}) {
  return call(cp.base, 'PUT', `/api/v1/configs/${name}`, body, { 'content-type': 'text/yaml', ...headers });
}

describe('PUT, GET, DELETE /api/v1/configs/{config_name}', () => {
  it('stores, reads (JSON and raw), lists, versions and deletes a config, keeping its history', async () => {
    const created = await putChecked('agents', 'model: small\n', { 'X-Updated-By': 'alice' });
    cp.clock.advance(1000);
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/api/v1/configs/agents');
    expect(created.body).toEqual({
      name: 'agents',
      version: 1,
      bytes: 13,
      updated_by: 'alice',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });

    const json = await call(cp.base, 'GET', '/api/v1/configs/agents');
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({
      name: 'agents',
      version: 1,
      content: 'model: small\n',
      updated_by: 'alice',
    });

    for (const type of ['text/plain', 'text/yaml', 'application/yaml']) {
      const raw = await fetch(`${cp.base}/api/v1/configs/agents`, { headers: { accept: type } });
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-type')).toBe(`${type}; charset=utf-8`);
      expect(raw.headers.get('x-config-version')).toBe('1');
      expect(await raw.text()).toBe('model: small\n');
    }
    // JSON stays the default and wins when preferred.
    const preferJson = await call(cp.base, 'GET', '/api/v1/configs/agents', undefined, {
      accept: 'application/json, text/plain;q=0.5',
    });
    expect(preferJson.body.content).toBe('model: small\n');

    const replaced = await putChecked('agents', 'model: large\n');
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      version: 2,
      updated_by: null,
      created_at: created.body.created_at,
    });
    expect(replaced.headers.get('location')).toBeNull();

    await putChecked('zeta', 'z');
    const list = await call(cp.base, 'GET', '/api/v1/configs');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.configs.map((c: { name: string }) => c.name)).toEqual(['agents', 'zeta']);
    expect(list.body.configs[0]).toEqual({
      name: 'agents',
      version: 2,
      bytes: 13,
      updated_by: null,
      created_at: created.body.created_at,
      updated_at: expect.stringMatching(ISO),
    });

    const deleted = await call(cp.base, 'DELETE', '/api/v1/configs/agents', undefined, {
      'X-Updated-By': 'bob',
    });
    expect(deleted.status).toBe(204);
    expect((await call(cp.base, 'GET', '/api/v1/configs/agents')).status).toBe(404);
    expect((await call(cp.base, 'DELETE', '/api/v1/configs/agents')).status).toBe(404);
    expect(
      (await call(cp.base, 'GET', '/api/v1/configs')).body.configs.map((c: { name: string }) => c.name),
    ).toEqual(['zeta']);

    const history = await call(cp.base, 'GET', '/api/v1/configs/agents/versions');
    expect(history.status).toBe(200);
    expect(history.body).toEqual({
      name: 'agents',
      versions: [
        {
          version: 1,
          deleted: false,
          bytes: 13,
          updated_by: 'alice',
          created_at: expect.stringMatching(ISO),
        },
        { version: 2, deleted: false, bytes: 13, updated_by: null, created_at: expect.stringMatching(ISO) },
        { version: 3, deleted: true, bytes: null, updated_by: 'bob', created_at: expect.stringMatching(ISO) },
      ],
      next_cursor: null,
    });
    const first = await call(cp.base, 'GET', '/api/v1/configs/agents/versions/1');
    expect(first.body).toMatchObject({
      name: 'agents',
      version: 1,
      deleted: false,
      content: 'model: small\n',
    });
    const firstRaw = await fetch(`${cp.base}/api/v1/configs/agents/versions/1`, {
      headers: { accept: 'text/plain' },
    });
    expect(await firstRaw.text()).toBe('model: small\n');
    const deletion = await call(cp.base, 'GET', '/api/v1/configs/agents/versions/3', undefined, {
      accept: 'text/plain',
    });
    expect(deletion.body).toMatchObject({ version: 3, deleted: true, content: null });
    expect((await call(cp.base, 'GET', '/api/v1/configs/agents/versions/4')).status).toBe(404);
    expect((await call(cp.base, 'GET', '/api/v1/configs/never/versions')).status).toBe(404);
    expect((await call(cp.base, 'GET', '/api/v1/configs/never/versions/1')).status).toBe(404);

    // Storing the name again creates it anew, with the next version number.
    cp.clock.advance(1000);
    const again = await putJson('agents', 'model: medium\n');
    expect(again.status).toBe(201);
    expect(again.body.version).toBe(4);
    expect(again.body.created_at).not.toBe(created.body.created_at);
  });

  it('keeps the text byte for byte: a BOM, CRLF, tabs and any Unicode', async () => {
    const text = '\uFEFFname: caf\u00e9 \u{1F600}\r\n\tindent: "x"\r\n';
    expect((await put('exact', text)).status).toBe(201);
    const raw = await fetch(`${cp.base}/api/v1/configs/exact`, { headers: { accept: 'text/plain' } });
    expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(text, 'utf8'))).toBe(true);
    const json = await call(cp.base, 'GET', '/api/v1/configs/exact');
    expect(json.body.content).toBe(text);
    expect(json.body.bytes).toBe(Buffer.byteLength(text));
  });

  it('accepts exactly 1 MiB and answers 413 one byte over, by Content-Length and when chunked', async () => {
    expect((await put('big', 'a'.repeat(MiB))).status).toBe(201);
    const over = await call(cp.base, 'PUT', '/api/v1/configs/big', 'b'.repeat(MiB + 1), {
      'content-type': 'text/plain',
    });
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('payload_too_large');

    // Chunked: no Content-Length, the bytes are counted.
    const chunked = await new Promise<{ status: number; body: string }>((done, fail) => {
      const req = httpRequest(`${cp.base}/api/v1/configs/big`, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain' },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', fail);
      for (let i = 0; i < 4; i++) req.write('c'.repeat(MiB / 4));
      req.end('c');
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).code).toBe('payload_too_large');

    const stored = await call(cp.base, 'GET', '/api/v1/configs/big');
    expect(stored.body).toMatchObject({ version: 1, bytes: MiB });
  });

  it('refuses bodies that are not configuration text, storing nothing', async () => {
    const cases: Array<[string, string | Uint8Array, Record<string, string>]> = [
      ['not UTF-8', new Uint8Array([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a]), {}],
      ['overlong encoding', new Uint8Array([0xc0, 0xaf]), {}],
      ['lone surrogate', new Uint8Array([0xed, 0xa0, 0x80]), {}],
      ['NUL', 'a: 1\u0000\n', {}],
      ['empty', '', {}],
      ['form-encoded', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['multipart', '--x--', { 'content-type': 'multipart/form-data; boundary=x' }],
      // A compressed body would be stored compressed (or refused as "not UTF-8", which misleads).
      ['gzip', 'a: 1\n', { 'content-encoding': 'gzip' }],
      ['deflate', 'a: 1\n', { 'content-encoding': 'deflate' }],
    ];
    for (const [what, body, headers] of cases) {
      const answer = await put('bad-body', body, headers);
      expect(answer.status, what).toBe(400);
      const problem = (await answer.json()) as any;
      expect(problem.code, what).toBe('invalid_request');
      expect(problem.errors, what).toEqual([{ field: '(body)', message: expect.any(String) }]);
    }
    // One through call() so the answer is checked against the document.
    expect((await putChecked('bad-body', '')).status).toBe(400);
    expect((await call(cp.base, 'GET', '/api/v1/configs/bad-body/versions')).status).toBe(404);
    expect((await put('plain', 'a: 1\n', { 'content-encoding': 'identity' })).status).toBe(201);
  });

  it('records X-Updated-By only when it is short printable text', async () => {
    expect((await putJson('who', 'a', { 'X-Updated-By': '  ops bot  ' })).body.updated_by).toBe('ops bot');
    expect((await putJson('who', 'a', { 'X-Updated-By': '   ' })).body.updated_by).toBeNull();
    expect((await putJson('who', 'a', { 'X-Updated-By': 'x'.repeat(200) })).status).toBe(200);
    const long = await putChecked('who', 'a', { 'X-Updated-By': 'x'.repeat(201) });
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual([{ field: 'X-Updated-By', message: expect.any(String) }]);
    const latin1 = await putJson('who', 'a', { 'X-Updated-By': 'Zo\u00eb' });
    expect(latin1.status).toBe(400);
    const versions = await call(cp.base, 'GET', '/api/v1/configs/who/versions');
    expect(versions.body.versions).toHaveLength(3);
    const onDelete = await call(cp.base, 'DELETE', '/api/v1/configs/who', undefined, {
      'X-Updated-By': 'y'.repeat(201),
    });
    expect(onDelete.status).toBe(400);
    expect((await call(cp.base, 'GET', '/api/v1/configs/who')).status).toBe(200);
  });

  it('refuses hostile and malformed names with 400 on every operation', async () => {
    const names = [
      '...',
      'a%2Fb',
      '..%2F..%2Fetc',
      'a%20b',
      '%00',
      'caf%C3%A9',
      "x'%3Bdrop%20table%20configs",
      'a'.repeat(129),
      'reload',
      'RELOAD',
    ];
    for (const name of names) {
      const answers = [
        await call(cp.base, 'GET', `/api/v1/configs/${name}`),
        await call(cp.base, 'PUT', `/api/v1/configs/${name}`, 'a: 1', { 'content-type': 'text/plain' }),
        await call(cp.base, 'DELETE', `/api/v1/configs/${name}`),
        await call(cp.base, 'GET', `/api/v1/configs/${name}/versions`),
        await call(cp.base, 'GET', `/api/v1/configs/${name}/versions/1`),
      ];
      for (const answer of answers) {
        expect(answer.status, name).toBe(400);
        expect(answer.body.errors[0].field, name).toBe('config_name');
      }
    }
    // `.` and `..` as sent by a client that does not resolve dot segments (curl --path-as-is).
    for (const name of ['.', '..', '%2e%2E']) {
      const status = await new Promise<number>((done, fail) => {
        const req = httpRequest(`${cp.base}/`, { method: 'PUT', path: `/api/v1/configs/${name}` });
        req.on('response', (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.on('error', fail);
        req.end('a: 1');
      });
      expect(status, name).toBe(400);
    }
    // 128 characters is the longest name.
    expect((await put('a'.repeat(128), 'x')).status).toBe(201);
    expect(
      (await call(cp.base, 'GET', '/api/v1/configs')).body.configs.map((c: { name: string }) => c.name),
    ).toEqual(['a'.repeat(128)]);
  });

  it('refuses malformed version numbers', async () => {
    await put('v', 'x');
    for (const version of ['0', '-1', 'abc', '1.5', '01', '1e3', '9999999999', '%20']) {
      const answer = await call(cp.base, 'GET', `/api/v1/configs/v/versions/${version}`);
      expect(answer.status, version).toBe(400);
      expect(answer.body.errors[0].field, version).toBe('version');
    }
  });

  it('gives concurrent writers distinct, gapless versions', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => put('busy', `n: ${i}\n`).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(11);
    const versions = await call(cp.base, 'GET', '/api/v1/configs/busy/versions');
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
  });
});

describe('GET /api/v1/configs/{config_name}/versions', () => {
  /** Every version number listed by following next_cursor from the first page. */
  async function crawl(base: string, name: string, limit?: number): Promise<number[][]> {
    const pages: number[][] = [];
    let cursor: string | null = null;
    do {
      const query = [limit ? `limit=${limit}` : '', cursor ? `cursor=${cursor}` : '']
        .filter(Boolean)
        .join('&');
      const page = await call(base, 'GET', `/api/v1/configs/${name}/versions${query ? `?${query}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(page.body.versions.map((v: { version: number }) => v.version));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    return pages;
  }

  /** A name with `count` versions written before versions were bounded (straight into the tables). */
  async function legacyHistory(name: string, count: number): Promise<void> {
    const db = cp.handle.db;
    await db.raw(
      `insert into config_versions (name, version, body, updated_by, created_at)
       select ?, g, 'n: ' || g || chr(10), null, now() from generate_series(1, ?) as g`,
      [name, count],
    );
    await db('configs').insert({
      name,
      body: `n: ${count}\n`,
      version: count,
      created_version: 1,
      created_at: new Date(),
      updated_at: new Date(),
    });
  }

  it('pages 2,000 versions by cursor, oldest first, each once, 100 to a page by default', async () => {
    await legacyHistory('big', 2000);
    const pages = await crawl(cp.base, 'big');
    expect(pages).toHaveLength(20);
    expect(pages.every((page) => page.length === 100)).toBe(true);
    expect(pages.flat()).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    const large = await crawl(cp.base, 'big', 1000);
    expect(large.map((page) => page.length)).toEqual([1000, 1000]);
  });

  it('keeps the newest 100 versions: a write prunes the older ones in its own transaction', async () => {
    await legacyHistory('big', 2000);
    expect((await putChecked('big', 'n: latest\n')).body.version).toBe(2001);
    expect((await crawl(cp.base, 'big', 1000)).flat()).toEqual(
      Array.from({ length: 100 }, (_, i) => 1902 + i),
    );
    const pruned = await call(cp.base, 'GET', '/api/v1/configs/big/versions/1901');
    expect(pruned.status).toBe(404);
    expect(pruned.body.detail).toBe(
      'The configuration "big" no longer has version 1901: only the newest 100 versions of a name are kept (config_store.max_versions), and its current version is 2001.',
    );
    expect((await call(cp.base, 'GET', '/api/v1/configs/big/versions/1902')).body.content).toBe('n: 1902\n');
    expect((await call(cp.base, 'GET', '/api/v1/configs/big/versions/2002')).body.detail).toBe(
      'The configuration "big" has no version 2002.',
    );
    // A deletion is a version too, and prunes as a write does.
    expect((await call(cp.base, 'DELETE', '/api/v1/configs/big')).status).toBe(204);
    expect((await crawl(cp.base, 'big', 1000)).flat()).toEqual(
      Array.from({ length: 100 }, (_, i) => 1903 + i),
    );
  });

  it('never prunes the current version, with config_store.max_versions at 1', async () => {
    const one = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.configStore.maxVersions = 1;
      },
    });
    try {
      for (const n of [1, 2, 3]) await call(one.base, 'PUT', '/api/v1/configs/solo', `n: ${n}\n`);
      expect((await crawl(one.base, 'solo')).flat()).toEqual([3]);
      expect((await call(one.base, 'GET', '/api/v1/configs/solo')).body).toMatchObject({
        version: 3,
        content: 'n: 3\n',
      });
      await call(one.base, 'DELETE', '/api/v1/configs/solo');
      expect((await crawl(one.base, 'solo')).flat()).toEqual([4]);
      // The name was stored once: an empty page after its last version is not a 404.
      const cursor = Buffer.from('4').toString('base64url');
      const after = await call(one.base, 'GET', `/api/v1/configs/solo/versions?cursor=${cursor}`);
      expect(after.status).toBe(200);
      expect(after.body).toEqual({ name: 'solo', versions: [], next_cursor: null });
    } finally {
      await one.close();
    }
  });

  it('keeps exactly the newest versions when concurrent writers on two replicas prune at once', async () => {
    const replicas = await Promise.all(
      [0, 1].map(() =>
        startTestControlPlane({
          handle: cp.handle,
          config: (config) => {
            config.configStore.maxVersions = 5;
          },
        }),
      ),
    );
    try {
      const statuses = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          fetch(`${replicas[i % 2]!.base}/api/v1/configs/busy`, {
            method: 'PUT',
            headers: { 'content-type': 'text/yaml' },
            body: `n: ${i}\n`,
          }).then((r) => r.status),
        ),
      );
      expect(statuses.sort()).toEqual([...Array(15).fill(200), 201].sort());
      expect((await crawl(cp.base, 'busy')).flat()).toEqual([12, 13, 14, 15, 16]);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });

  it('answers 400 invalid_request for a bad limit or cursor, and 404 for a name never stored', async () => {
    await putChecked('paged', 'a: 1\n');
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['cursor=MA', 'cursor'], // "0"
      ['cursor=MDE', 'cursor'], // "01": not as given out
      [`cursor=${Buffer.from('x').toString('base64url')}`, 'cursor'],
      ['cursor=%2B%2B', 'cursor'],
    ];
    for (const [query, field] of cases) {
      const answer = await call(cp.base, 'GET', `/api/v1/configs/paged/versions?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    const never = await call(
      cp.base,
      'GET',
      `/api/v1/configs/never/versions?cursor=${Buffer.from('3').toString('base64url')}`,
    );
    expect(never.status).toBe(404);
  });
});

describe('PUT /api/v1/configs/control-plane', () => {
  it('stores a valid settings document', async () => {
    const answer = await putChecked(
      'control-plane',
      'node_health:\n  check_interval: 15s\nlogging:\n  level: debug\n',
    );
    expect(answer.status).toBe(201);
    expect((await putChecked('control-plane', '# nothing set\n')).status).toBe(200);
    // YAML nulls set nothing: a null document, a null section, a null value.
    for (const text of ['null', '~\n', 'node_health: null\n', 'server:\n  port: null\n']) {
      expect((await putChecked('control-plane', text)).status, text).toBe(200);
    }
    expect((await call(cp.base, 'GET', '/api/v1/configs/control-plane')).body).toMatchObject({
      version: 6,
      content: 'server:\n  port: null\n',
    });
  });

  it('refuses an invalid one with each error naming its key and source, storing nothing', async () => {
    const cases: Array<[string, string, Array<{ key: string; message: RegExp }>]> = [
      ['bad YAML', 'server: [1, 2\n', [{ key: '(document)', message: /not valid YAML/ }]],
      ['a list', '- a\n- b\n', [{ key: '(document)', message: /expected a mapping/ }]],
      ['a scalar', 'just text', [{ key: '(document)', message: /expected a mapping/ }]],
      [
        'unknown key',
        'node_health:\n  check_intervall: 15s\n',
        [{ key: 'node_health.check_intervall', message: /unknown setting.*check_interval/ }],
      ],
      [
        'bad values',
        'server:\n  port: eighty\nnode_health:\n  check_interval: soon\n',
        [
          { key: 'server.port', message: /whole number/ },
          { key: 'node_health.check_interval', message: /duration/ },
        ],
      ],
      [
        'never from the database',
        'storage:\n  database_url: postgres://evil@elsewhere/db\nconnector:\n  token: mine\nconfig_source: file\n',
        [
          { key: 'storage.database_url', message: /never read from the database/ },
          { key: 'connector.token', message: /never read from the database/ },
          { key: 'config_source', message: /never read from the database/ },
        ],
      ],
      [
        'nested far too deep',
        `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
        [{ key: '(document)', message: /nested more than 32 levels deep/ }],
      ],
      // Two of these once ended the process (a fatal V8 error with the parser's stack deep).
      ['unclosed braces', '{'.repeat(2000), [{ key: '(document)', message: /nested more than 32/ }]],
      ['unclosed braces again', '{'.repeat(2000), [{ key: '(document)', message: /nested more than 32/ }]],
      ['unclosed brackets', '['.repeat(14_000), [{ key: '(document)', message: /nested more than 32/ }]],
      [
        'thousands of keys',
        Array.from({ length: 5000 }, (_, i) => `k${i}: v`).join('\n'),
        [{ key: '(document)', message: /more than 1000 entries/ }],
      ],
      [
        'over 64 KiB',
        `logging:\n  level: debug\n# ${'x'.repeat(64 * 1024)}\n`,
        [{ key: '(document)', message: /a settings document is at most 65536 bytes/ }],
      ],
      ['a section as a value', 'node_health: 5\n', [{ key: 'node_health', message: /expected a mapping/ }]],
      [
        'alias bomb',
        `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${`*${i === 0 ? 'a' : `b${i - 1}`}, `.repeat(10)}]`).join('\n')}\n`,
        [{ key: '(document)', message: /not valid YAML|unknown setting/ }],
      ],
    ];
    for (const [what, text, expected] of cases) {
      const answer = await putChecked('control-plane', text);
      expect(answer.status, what).toBe(400);
      expect(answer.body.code, what).toBe('invalid_request');
      const errors = answer.body.errors as Array<{
        field: string;
        key: string;
        source: string;
        message: string;
      }>;
      expect(errors.length, what).toBeGreaterThanOrEqual(expected.length);
      for (const want of expected) {
        const found = errors.find((e) => e.key === want.key);
        expect(found, `${what}: ${want.key} in ${JSON.stringify(errors)}`).toBeDefined();
        expect(found!.field).toBe(want.key);
        expect(found!.source).toBe('request body');
        expect(found!.message).toMatch(want.message);
      }
    }
    expect((await call(cp.base, 'GET', '/api/v1/configs/control-plane')).status).toBe(404);
    expect((await call(cp.base, 'GET', '/api/v1/configs/control-plane/versions')).status).toBe(404);
  });

  it('checks only the control plane config: other names are free text', async () => {
    expect((await put('other', 'server: [1, 2\nstorage: x\n')).status).toBe(201);
  });
});

describe('POST /api/v1/configs/reload', () => {
  it('answers 503 service_unavailable when the server reads its settings from the file', async () => {
    const answer = await call(cp.base, 'POST', '/api/v1/configs/reload');
    expect(answer.status).toBe(503);
    expect(answer.body.code).toBe('service_unavailable');
    expect(answer.body.detail).toMatch(/SERVICE_CONFIG_SOURCE=db/);
  });
});

describe('POST /api/v1/configs/reload when the event bus refuses the broadcast', () => {
  it('still applies the reload here and says the other replicas were not told', async () => {
    const config = defaultConfig();
    config.configSource = 'db';
    const bus = createInProcessEventBus();
    const errors: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
    const app = createApp({
      db: cp.handle.db,
      config,
      log,
      events: {
        ...bus,
        publish: async () => {
          throw new Error('the bus is down');
        },
      },
      reloadConfig: async () => {
        const next = defaultConfig();
        next.configSource = 'db';
        next.api.auth.apiKey = 'reloaded';
        return next;
      },
    });
    const server = createServer(app.callback());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const reload = await call(base, 'POST', '/api/v1/configs/reload');
      expect(reload.status).toBe(200);
      expect(reload.body).toMatchObject({ applied: ['api.auth.api_key'], replicas_notified: false });
      expect((await call(base, 'GET', '/api/v1/configs')).status).toBe(401);
      expect(
        (await call(base, 'GET', '/api/v1/configs', undefined, { 'x-api-key': 'reloaded' })).status,
      ).toBe(200);
      // The reload applied logging.level (info) too, so request lines follow; errors are level 50.
      expect(errors.filter((e) => e.level === 50).map((e) => e.msg)).toEqual([
        'config reload applied here but not broadcast to the other replicas',
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await bus.close();
    }
  });
});

describe('config storage behind the API key', () => {
  it('needs the key on every operation when one is set', async () => {
    const secured = await startTestControlPlane({
      config: (config) => {
        config.api.auth.apiKey = 'k-1';
      },
    });
    try {
      for (const [method, path] of [
        ['GET', '/api/v1/configs'],
        ['GET', '/api/v1/configs/x'],
        ['PUT', '/api/v1/configs/x'],
        ['DELETE', '/api/v1/configs/x'],
        ['GET', '/api/v1/configs/x/versions'],
        ['GET', '/api/v1/configs/x/versions/1'],
        ['POST', '/api/v1/configs/reload'],
      ] as const) {
        const answer = await call(secured.base, method, path, method === 'PUT' ? 'a' : undefined);
        expect(answer.status, `${method} ${path}`).toBe(401);
      }
      const ok = await call(secured.base, 'PUT', '/api/v1/configs/x', 'a', {
        'x-api-key': 'k-1',
        'content-type': 'text/plain',
      });
      expect(ok.status).toBe(201);
    } finally {
      await secured.close();
    }
  });
});
