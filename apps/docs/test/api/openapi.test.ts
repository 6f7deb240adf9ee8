import { Validator } from '@seriousme/openapi-schema-validator';
import type { TestDatabase } from '@switchyard/shared/db';
import { openApiSchemas, pointerToken as token } from '@switchyard/shared/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, PERMALINK_ROUTES } from '../../server/api/route-specs.ts';
import { createOpenApiDocument } from '../../src/lib/openapi.ts';
import { openMigratedTestDatabase } from '../support/database.ts';
import { builtSite, request, startTestServer } from './support/docs-server.ts';

type Schema = Record<string, any>;

/**
 * Validates values against schemas inside a published OpenAPI 3.1 document with Ajv (draft 2020-12,
 * the dialect OpenAPI 3.1 uses, plus the standard formats). The document is registered whole, so
 * its `#/components/...` references resolve exactly as a client's validator would resolve them.
 */
function openApiValidator(doc: Schema) {
  const schemas = openApiSchemas(doc);
  const at = schemas.at;
  const describe = schemas.problems;
  return {
    /** Problems of a response body against the schema of `path` `method` `status` `mediaType`. */
    response(path: string, method: string, status: string, mediaType: string, value: unknown): string[] {
      let pointer = `/paths/${token(path)}/${method}/responses/${status}`;
      const response = doc.paths[path][method].responses[status];
      if (response.$ref) pointer = String(response.$ref).slice(1);
      const validate = at(`${pointer}/content/${token(mediaType)}/schema`);
      return validate(value) ? [] : describe(validate);
    },
    /** Problems of a value against a named component schema. */
    schema(name: string, value: unknown): string[] {
      const validate = at(`/components/schemas/${token(name)}`);
      return validate(value) ? [] : describe(validate);
    },
  };
}

/** A run bundle in the platform CLI's spelling (as it publishes runs). */
const CLI_BUNDLE = {
  version: 1,
  workflow_id: 'wf_cli',
  generated_at: '2026-11-22T05:00:03Z',
  totals: { agents: 1, duration_ms: null, cost_usd: null },
  nodes: [
    {
      id: 'exec_1',
      agent: 'support-agent',
      func: 'triage',
      status: 'running',
      started_at: '2026-11-22T05:00:00Z',
      ended_at: '',
      duration_ms: null,
      cost_usd: null,
      model: null,
      input_preview: '[redacted]',
      output_preview: '',
      error: null,
    },
  ],
  edges: [],
};

describe('OpenAPI description (/openapi.json)', () => {
  const doc = createOpenApiDocument('http://127.0.0.1:4321') as Schema;
  const site = builtSite();
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  /** The document the built site publishes, the one clients validate against. */
  let published: Schema;
  let validator: ReturnType<typeof openApiValidator>;

  beforeAll(async () => {
    database = await openMigratedTestDatabase();
    server = await startTestServer({
      db: database.db,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
      sharesMaxBytes: 16 * 1024,
    });
    published = (await request(`${server.url}/openapi.json`)).json();
    validator = openApiValidator(published);
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('is a valid OpenAPI 3.1 document, as built and as published', async () => {
    for (const document of [doc, published]) {
      const result = await new Validator().validate(structuredClone(document));
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(document.openapi).toMatch(/^3\.1\./);
    }
  });

  it('has schemas that tell a wrong answer from a right one (the oracle is not vacuous)', () => {
    expect(
      validator.schema('SearchResponse', { query: 'q', limit: 5, total: 'many', results: [] }),
    ).not.toEqual([]);
    expect(validator.schema('Problem', { type: 'x' })).not.toEqual([]);
    expect(validator.schema('CreatedShare', { id: 'run_x' })).not.toEqual([]);
    expect(validator.schema('StoredRunBundle', { ...CLI_BUNDLE })).not.toEqual([]);
  });

  it('describes both spellings of the bundle a client publishes, and the limits of each field', () => {
    expect(validator.schema('RunBundle', CLI_BUNDLE)).toEqual([]);
    const documented = {
      version: 1,
      workflow_id: 'wf',
      title: 'Run',
      generated_at: '2026-11-22T05:00:00.000Z',
      totals: { nodes: 1, duration_ms: 5 },
      nodes: [
        {
          execution_id: 'e1',
          target: 'a.b',
          status: 'succeeded',
          duration_ms: 5,
          finished_at: '2026-11-22T05:00:01Z',
        },
      ],
      edges: [],
    };
    expect(validator.schema('RunBundle', documented)).toEqual([]);
    const node = CLI_BUNDLE.nodes[0]!;
    for (const wrong of [
      { ...node, id: undefined },
      { ...node, func: undefined },
      { ...node, status: 'done' },
      { ...node, ended_at: 'later' },
      { ...node, cost_usd: -1 },
    ]) {
      expect(
        validator.schema('RunBundle', { ...CLI_BUNDLE, nodes: [JSON.parse(JSON.stringify(wrong))] }),
      ).not.toEqual([]);
    }
    expect(validator.schema('RunBundle', { ...CLI_BUNDLE, totals: { 'Not-snake': 1 } })).not.toEqual([]);
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

  it('matches what the server really answers, validated with Ajv against the published document', async () => {
    const page = site.pages[0]!;
    const publish = (body: string) => request(`${server.url}/api/v1/shares`, { method: 'POST', body });
    const created = await publish(
      JSON.stringify({
        version: 1,
        workflow_id: 'wf',
        title: 'OpenAPI',
        generated_at: '2026-11-22T05:00:00Z',
        totals: { nodes: 1 },
        nodes: [{ execution_id: 'e1', target: 'a.b', status: 'succeeded', duration_ms: 5 }],
        edges: [],
      }),
    );
    const fromCli = await publish(JSON.stringify(CLI_BUNDLE));
    const share = created.json();
    const cliShare = fromCli.json();
    const asJson = { headers: { Accept: 'application/json' } };
    const samples: Array<[string, string, Awaited<ReturnType<typeof request>>]> = [
      ['/api/v1/shares', '201', created],
      ['/api/v1/shares', '201', fromCli],
      ['/api/v1/shares', '400', await publish('{"version": 1}')],
      ['/api/v1/shares', '400', await publish(`${'['.repeat(100)}${']'.repeat(100)}`)],
      ['/api/v1/shares', '413', await publish(JSON.stringify({ padding: 'x'.repeat(20_000) }))],
      ['/api/v1/shares', '405', await request(`${server.url}/api/v1/shares`)],
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
      ['/s/{id}', '200', await request(`${server.url}/s/${share.id}`, asJson)],
      ['/s/{id}', '200', await request(`${server.url}/s/${cliShare.id}`, asJson)],
      ['/share/{id}', '200', await request(`${server.url}/share/${share.id}`, asJson)],
      ['/s/{id}', '404', await request(`${server.url}/s/run_0000000000000000000000000a`, asJson)],
      ['/s/{id}', '406', await request(`${server.url}/s/${share.id}`, { headers: { Accept: 'image/png' } })],
      ['/api/v1/search', '400', await request(`${server.url}/api/v1/search?q=`)],
      ['/api/v1/topics', '400', await request(`${server.url}/api/v1/topics?category=nope`)],
      ['/api/v1/page', '404', await request(`${server.url}/api/v1/page?path=/docs/none`)],
    ];
    for (const [path, status, res] of samples) {
      const context = `${path} ${status}: ${res.text.slice(0, 300)}`;
      expect(String(res.status), context).toBe(status);
      const method = Object.keys(published.paths[path])[0]!;
      const mediaType = String(res.headers['content-type']).split(';')[0]!;
      expect(validator.response(path, method, status, mediaType, res.json()), context).toEqual([]);
    }
  });
});
