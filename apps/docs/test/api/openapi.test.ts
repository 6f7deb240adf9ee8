import { Validator } from '@seriousme/openapi-schema-validator';
import { openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, PERMALINK_ROUTES } from '../../server/api/route-specs.ts';
import { createOpenApiDocument } from '../../src/lib/openapi.ts';
import { builtSite, request, startTestServer } from './support/docs-server.ts';

type Schema = Record<string, any>;

/**
 * A small structural check of a value against the document's JSON Schema subset (types,
 * required members, nested objects and arrays, const, enum, bounds): enough to catch a
 * response that drifted from its description.
 */
function violations(value: unknown, schema: Schema, doc: Schema, at = '$'): string[] {
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').pop()!;
    return violations(value, doc.components.schemas[name], doc, at);
  }
  const problems: string[] = [];
  const types: string[] = schema.type ? [schema.type].flat() : [];
  const typeOf = (v: unknown) =>
    v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
  if (types.length > 0) {
    const actual = typeOf(value);
    const ok = types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
    if (!ok) return [`${at}: expected ${types.join('|')}, got ${actual}`];
  }
  if ('const' in schema && value !== schema.const) problems.push(`${at}: expected ${schema.const}`);
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at}: not one of ${schema.enum}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: above maximum`);
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in object)) problems.push(`${at}.${name}: missing`);
    for (const [name, sub] of Object.entries<Schema>(schema.properties ?? {})) {
      if (name in object) problems.push(...violations(object[name], sub, doc, `${at}.${name}`));
    }
  }
  if (Array.isArray(value) && schema.items) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      problems.push(`${at}: too many items`);
    value.forEach((item, i) => {
      problems.push(...violations(item, schema.items, doc, `${at}[${i}]`));
    });
  }
  return problems;
}

describe('OpenAPI description (/openapi.json)', () => {
  const doc = createOpenApiDocument('http://127.0.0.1:4321') as Schema;
  const site = builtSite();
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;

  beforeAll(async () => {
    database = await openTestDatabase();
    server = await startTestServer({ db: database.db, rateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('is what the built site serves, with the servers entry from SITE_URL', async () => {
    const served = await request(`${server.url}/openapi.json`);
    expect(served.status).toBe(200);
    expect(served.json()).toEqual(createOpenApiDocument(site.manifest.site));
    expect(served.json().servers).toEqual([
      { url: site.manifest.site, description: 'This documentation site' },
    ]);
  });

  it('publishes the lifecycle policy under x-api-lifecycle', () => {
    expect(doc['x-api-lifecycle']).toEqual({
      current_version: 'v1',
      versioning: 'url-path',
      deprecation_notice_days: 180,
      deprecation_headers: ['Deprecation', 'Sunset', 'Link'],
      aliases: {
        '/api/agent/search': '/api/v1/search',
        '/api/agent/topics': '/api/v1/topics',
        '/api/agent/page': '/api/v1/page',
      },
    });
  });

  it('describes exactly the routes the server answers', () => {
    const described = Object.entries<Schema>(doc.paths).flatMap(([path, item]) =>
      Object.entries<Schema>(item).map(
        ([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`,
      ),
    );
    const routed = [...API_ROUTES, ...PERMALINK_ROUTES].map((r) => `${r.method} ${r.path} ${r.operationId}`);
    expect(described.sort()).toEqual(routed.sort());
    for (const id of [
      'searchDocumentation',
      'listDocumentationTopics',
      'getDocumentationPage',
      'createRunShare',
    ]) {
      expect(described.some((d) => d.endsWith(` ${id}`))).toBe(true);
    }
  });

  it('gives every parameter its bounds', () => {
    const { SearchQuery, SearchLimit, Category, PagePath } = doc.components.parameters;
    expect(SearchQuery).toMatchObject({
      name: 'q',
      in: 'query',
      required: true,
      schema: { minLength: 1, maxLength: 512 },
    });
    expect(SearchLimit).toMatchObject({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
    });
    expect(Category).toMatchObject({ name: 'category', required: false, schema: { maxLength: 100 } });
    expect(PagePath).toMatchObject({
      name: 'path',
      required: true,
      schema: { minLength: 1, maxLength: 512 },
    });
  });

  it('documents the headers of every response and a problem document for every error', () => {
    const resolve = (value: Schema) =>
      value.$ref ? doc.components.responses[String(value.$ref).split('/').pop()!] : value;
    for (const [path, item] of Object.entries<Schema>(doc.paths)) {
      for (const operation of Object.values<Schema>(item)) {
        for (const [status, raw] of Object.entries<Schema>(operation.responses)) {
          const response = resolve(raw);
          for (const header of [
            'RateLimit-Limit',
            'RateLimit-Remaining',
            'RateLimit-Reset',
            'RateLimit-Policy',
            'X-API-Version',
            'Link',
          ]) {
            expect(response.headers, `${path} ${status}`).toHaveProperty(header);
          }
          if (Number(status) >= 400) {
            expect(response.content['application/problem+json'].schema).toEqual({
              $ref: '#/components/schemas/Problem',
            });
          }
          if (status === '429') expect(response.headers).toHaveProperty('Retry-After');
        }
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['429', '500']));
      }
    }
    expect(doc.paths['/api/v1/shares'].post.responses['201'].headers).toHaveProperty('Location');
    expect(doc.paths['/api/v1/shares'].post.responses).toHaveProperty('413');
  });

  it('matches what the server really answers', async () => {
    const page = site.pages[0]!;
    const created = await request(`${server.url}/api/v1/shares`, {
      method: 'POST',
      body: JSON.stringify({
        version: 1,
        workflow_id: 'wf',
        title: 'OpenAPI',
        generated_at: '2026-11-22T05:00:00Z',
        totals: { nodes: 1 },
        nodes: [{ execution_id: 'e1', target: 'a.b', status: 'succeeded', duration_ms: 5 }],
        edges: [],
      }),
    });
    const share = created.json();
    const samples: Array<[string, string, Awaited<ReturnType<typeof request>>]> = [
      ['/api/v1/shares', '201', created],
      [
        '/api/v1/search',
        '200',
        await request(`${server.url}/api/v1/search?q=${encodeURIComponent(page.title)}`),
      ],
      ['/api/v1/topics', '200', await request(`${server.url}/api/v1/topics`)],
      ['/api/v1/page', '200', await request(`${server.url}/api/v1/page?path=${page.path}`)],
      ['/api/agent/search', '200', await request(`${server.url}/api/agent/search?q=agent`)],
      ['/api/agent/topics', '200', await request(`${server.url}/api/agent/topics`)],
      ['/api/agent/page', '200', await request(`${server.url}/api/agent/page?path=${page.path}`)],
      [
        '/s/{id}',
        '200',
        await request(`${server.url}/s/${share.id}`, { headers: { Accept: 'application/json' } }),
      ],
      [
        '/share/{id}',
        '200',
        await request(`${server.url}/share/${share.id}`, { headers: { Accept: 'application/json' } }),
      ],
      ['/api/v1/search', '400', await request(`${server.url}/api/v1/search?q=`)],
      ['/api/v1/page', '404', await request(`${server.url}/api/v1/page?path=/docs/none`)],
    ];
    for (const [path, status, res] of samples) {
      expect(String(res.status), path).toBe(status);
      const operation = Object.values<Schema>(doc.paths[path])[0]!;
      const described = operation.responses[status];
      const response = described.$ref ? doc.components.responses[described.$ref.split('/').pop()] : described;
      const type = String(res.headers['content-type']).split(';')[0]!;
      expect(Object.keys(response.content), `${path} ${status}`).toContain(type);
      expect(violations(res.json(), response.content[type].schema, doc), `${path} ${status}`).toEqual([]);
    }
  });
});
