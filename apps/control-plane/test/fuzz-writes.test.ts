/**
 * What must keep holding: no request can make the control plane answer 5xx. Every
 * write operation (POST, PUT, PATCH, DELETE) of the OpenAPI document the app serves gets a fixed
 * set of hostile requests, built from the operation itself:
 * - whole bodies: none, `null`, `[]`, `{}`, scalars, invalid JSON, a BOM, JSON sent as text/plain
 *   or form data, 1,000 levels of arrays and of objects, one byte over the operation's documented
 *   limit (sized and chunked), `__proto__`/`constructor` members, YAML bombs for YAML operations;
 * - the operation's documented example with each field of its request schema replaced: arrays by
 *   `[]`, `{}` and `[null]`, objects by `[]`, `__proto__` and `constructor` members, date-time
 *   fields by out-of-range dates (`0000-06-01T00:00:00Z` …), integers by negative, fractional
 *   and huge numbers, numbers by `1e999` and friends, strings by very long text, NUL bytes and
 *   lone surrogates, every field by `null`;
 * - path parameters filled with an existing id (a registered node, a fresh execution, a stored
 *   config, a stored vector) and with garbage, header and query parameters with garbage.
 * Two apps run on one database: one without an API key, one with an API key and an approval
 * webhook secret (so signed approval decisions are checked); the connector token is set on both.
 * Any 5xx, or a connection the server drops, fails the test, naming the operation, the case and
 * the server's error log; so does an answer the document does not describe (a status it does not
 * list for the operation, a body that does not match). Nothing here is random: a failure replays
 * exactly.
 */
import { createServer, type Server } from 'node:http';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { type Config, loadConfig, STORED_CONFIG_NAME } from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { CONNECTOR_CAPABILITIES } from '../src/modules/connector/index.ts';
import { DEFAULT_BODY_LIMIT } from '../src/platform/http/request-body.ts';
import { attachUpgrades } from '../src/platform/http/upgrade.ts';
import { startTestAgent, type TestAgent } from './helpers/agents.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';
import { createOpenApiValidator, METHODS, type OpenApiValidator } from './helpers/openapi.ts';

type Json = any;

const KEY = 'fuzz-api-key';
const CONNECTOR_TOKEN = 'fuzz-connector-token';
const APPROVAL_SECRET = 'fuzz-approval-secret';
const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);
/** Requests in flight at once per operation. */
const CONCURRENCY = 4;
/**
 * Operations whose handling depends on the API key past authentication: the execute lanes forward
 * it to the agent, and an approval decision is checked against the webhook secret set with it.
 * With an API key set, they get every request; the others get the core requests (see Body).
 */
const KEY_DEPENDENT = new Set([
  'POST /api/v1/execute/{target}',
  'POST /api/v1/execute/async/{target}',
  'POST /api/v1/webhooks/approval',
]);
/** How deep the request schema is walked for fields to replace. */
const SCHEMA_DEPTH = 6;

/** Settings both apps load, as from the environment of a deployment with config_source db. */
const BASE_ENV = {
  SERVICE_CONFIG_SOURCE: 'db',
  SERVICE_CONFIG_FILE: '',
  SERVICE_CONNECTOR_TOKEN: CONNECTOR_TOKEN,
  SWITCHYARD_CONNECTOR_CAPABILITIES: CONNECTOR_CAPABILITIES.join(','),
  // Example URLs are pointed at a test agent on 127.0.0.1 over plain http.
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
};

interface AppUnderTest {
  name: 'without an API key' | 'with an API key';
  base: string;
  /** Headers every request carries (the API key, when one is set). */
  auth: Record<string, string>;
  /** Error-level log lines, parsed, for the failure report. */
  errors: Array<Record<string, unknown>>;
}

let handle: TestDatabase;
const servers: Server[] = [];
const apps: AppUnderTest[] = [];
let published: Json;
let validator: OpenApiValidator;
let agent: ExecutionAgent;
/** Answers health checks and shutdown notices; every example URL points here. */
let sink: TestAgent;
/** The node lifecycle and connector operations act on (its agent is `sink`). */
const LIFE_NODE = `fuzz-life-${process.pid}`;
const EXEC_NODE = `fuzz-exec-${process.pid}`;
const CONFIG_NAME = 'fuzz-config';
const VECTOR_KEY = 'fuzz-vector';

async function startApp(name: AppUnderTest['name'], env: Record<string, string>): Promise<AppUnderTest> {
  const errors: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  const config: Config = await loadConfig({ env, db: handle.db });
  const app = createApp({
    db: handle.db,
    config,
    log,
    reloadConfig: () => loadConfig({ env, db: handle.db }),
  });
  const server = createServer(app.callback());
  server.keepAliveTimeout = 60_000;
  attachUpgrades(server, app.callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { name, base, auth: env.SERVICE_API_KEY ? { 'X-API-Key': env.SERVICE_API_KEY } : {}, errors };
}

/**
 * A docs site that takes every shared run (POST /api/v1/shares) and answers its permalink, so the
 * share operation publishes for real instead of answering 503 for want of a docs site.
 */
async function startDocsSite(): Promise<string> {
  let shares = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/v1/shares') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      const id = `run_fuzz${++shares}`;
      res
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id, url: `http://docs.example/s/${id}` }));
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  sink = await startTestAgent('ok');
  const env = { ...BASE_ENV, SWITCHYARD_SHARES_PUBLISH_URL: await startDocsSite() };
  apps.push(await startApp('without an API key', env));
  apps.push(
    await startApp('with an API key', {
      ...env,
      SERVICE_API_KEY: KEY,
      SERVICE_APPROVAL_WEBHOOK_SECRET: APPROVAL_SECRET,
    }),
  );
  const open = apps[0]!;
  published = await (await fetch(`${open.base}/api/v1/openapi.json`)).json();
  validator = createOpenApiValidator(published);
  agent = await startExecutionAgent({
    controlPlaneUrl: open.base,
    nodeId: EXEC_NODE,
    reasoners: { fn: { kind: 'answer' }, hang: { kind: 'hang' } },
    skills: { sk: { kind: 'answer' } },
    heartbeatMs: 600_000,
  });
  await agent.register();
  await must(open, 'POST', '/api/v1/nodes/register', {
    id: LIFE_NODE,
    version: '1.0.0',
    base_url: sink.url,
    reasoners: [{ id: 'fn' }],
  });
});

afterAll(async () => {
  await agent?.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  await sink?.close();
  await handle?.close();
});

/** A setup request that must succeed. */
async function must(
  app: AppUnderTest,
  method: string,
  path: string,
  body?: unknown,
  type = 'application/json',
) {
  const response = await fetch(`${app.base}${path}`, {
    method,
    headers: { ...app.auth, 'content-type': type },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`setup ${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// ---- the document ----

interface Operation {
  method: string;
  template: string;
  operation: Json;
  /** Path, query and header parameters (references resolved). */
  parameters: Json[];
}

function resolve(node: Json): Json {
  let current = node;
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`reference loop at ${current.$ref}`);
    const parts = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    current = parts.reduce((at: Json, part) => at?.[part], published);
  }
  return current;
}

function writeOperations(): Operation[] {
  const list: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(published.paths)) {
    for (const method of METHODS) {
      if (!WRITE_METHODS.has(method) || !item[method]) continue;
      const parameters = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map(resolve);
      list.push({ method: method.toUpperCase(), template, operation: item[method], parameters });
    }
  }
  return list;
}

/** The body limit in bytes the operation documents for its 413 answer, if it states one. */
function documentedLimit(op: Operation): number | undefined {
  const text = JSON.stringify(op.operation.responses?.['413'] ?? {});
  const found = /over (\d+) bytes|limit of (\d+) bytes/.exec(text);
  return found ? Number(found[1] ?? found[2]) : undefined;
}

// ---- hostile values ----

/** Stands for raw JSON number text JSON.stringify cannot write (1e999 parses to Infinity). */
const RAW = (text: string) => `\u0001raw:${text}\u0001`;
const serialise = (value: unknown) =>
  JSON.stringify(value).replace(/"\\u0001raw:([^"\\]*)\\u0001"/g, (_m, text: string) => text);

/** Values whose own members are `__proto__` and `constructor`, as a client's JSON text has them. */
const PROTO_MEMBER = JSON.parse('{"__proto__":{"polluted":true},"x":1}');
const CONSTRUCTOR_MEMBER = JSON.parse('{"constructor":{"prototype":{"polluted":true}}}');

const LONG = 'x'.repeat(70_000);
const OUT_OF_RANGE_DATES = [
  '0000-06-01T00:00:00Z',
  '+275760-09-13T00:00:00.001Z',
  '-000001-01-01T00:00:00Z',
  '2026-02-30T25:61:61Z',
];
/** Field names that carry a time even where the schema says only `string`. */
const TIME_NAME = /(^|_)(at|time|timestamp|since|until|date|expires?)$/i;

interface Field {
  path: Array<string | number>;
  kinds: Set<string>;
}

/** The fields of a request schema (object members, array items) with the kinds each may be. */
function fieldsOf(schema: Json): Field[] {
  const fields = new Map<string, Field>();
  const add = (path: Array<string | number>, kind: string) => {
    const key = JSON.stringify(path);
    if (!fields.has(key)) fields.set(key, { path, kinds: new Set() });
    fields.get(key)!.kinds.add(kind);
  };
  const walk = (node: Json, path: Array<string | number>, depth: number) => {
    const s = resolve(node);
    if (!s || typeof s !== 'object' || depth > SCHEMA_DEPTH) return;
    for (const key of ['anyOf', 'oneOf', 'allOf']) for (const part of s[key] ?? []) walk(part, path, depth);
    const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    if (s.properties && !types.includes('object')) types.push('object');
    const name = String(path.at(-1) ?? '');
    for (const type of types) {
      if (type === 'string' && (s.format === 'date-time' || s.format === 'date' || TIME_NAME.test(name))) {
        add(path, 'date');
      }
      if (type !== 'null') add(path, type);
    }
    // A member or value of any JSON type (`{}`) is replaced by one of each.
    if (types.length === 0 && !s.anyOf && !s.oneOf && !s.allOf) add(path, 'any');
    if (/schema$/.test(name)) add(path, 'schema');
    for (const [member, sub] of Object.entries<Json>(s.properties ?? {}))
      walk(sub, [...path, member], depth + 1);
    // A member of a free-form object (an execution's input, a node's metadata).
    if (s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties) {
      walk(s.additionalProperties, [...path, 'member'], depth + 1);
    }
    if (s.items) walk(s.items, [...path, 0], depth + 1);
  };
  walk(schema, [], 0);
  return [...fields.values()].filter((field) => field.path.length > 0);
}

/** What replaces a field of each kind. */
const REPLACEMENTS: Record<string, Array<[string, unknown]>> = {
  array: [
    ['[]', []],
    ['{} for an array', {}],
    ['[null]', [null]],
  ],
  object: [
    ['[] for an object', []],
    ['__proto__ member', PROTO_MEMBER],
    ['constructor member', CONSTRUCTOR_MEMBER],
  ],
  date: OUT_OF_RANGE_DATES.map((date) => [date, date]),
  integer: [
    ['-1', -1],
    ['1.5', 1.5],
    ['2^53+1', RAW('9007199254740993')],
    ['1e308', 1e308],
    ['-1e308', -1e308],
  ],
  number: [
    ['1e999', RAW('1e999')],
    ['-1e999', RAW('-1e999')],
    ['1e-400', RAW('1e-400')],
    ['30 digits', RAW('123456789012345678901234567890')],
  ],
  string: [
    ['70,000 characters', LONG],
    ['NUL', 'a\u0000b'],
    ['lone surrogate', 'a\ud800b'],
    ['empty string', ''],
  ],
  boolean: [['"true" for a boolean', 'true']],
  /**
   * JSON Schemas a function may register (input_schema, output_schema): ones ajv cannot compile,
   * ones that refer outside themselves, an $id two schemas may share, a reference loop. A
   * catastrophic `pattern` is left to the ReDoS work on schema patterns.
   */
  schema: [
    ['schema with an invalid pattern', { type: 'string', pattern: '(' }],
    ['schema with an unknown type', { type: 'bogus' }],
    ['schema with an unknown format', { type: 'string', format: 'nope' }],
    ['schema with a missing $ref', { $ref: '#/definitions/missing' }],
    ['schema with a remote $ref', { $ref: 'http://127.0.0.1:9/schema.json' }],
    ['schema with an $id', { $id: 'https://example.com/fuzz.json', type: 'object' }],
    ['schema referring to itself', { type: 'object', properties: { a: { $ref: '#' } } }],
    ['schema with a $ref loop', { $ref: '#/definitions/a', definitions: { a: { $ref: '#/definitions/a' } } }],
    ['schema of an unknown draft', { $schema: 'http://json-schema.org/draft-04/schema#' }],
    ['async schema', { $async: true, type: 'object' }],
    ['schema with keywords of the wrong type', { minLength: '1', required: 'a', properties: [] }],
    ['schema with huge bounds', { type: 'number', multipleOf: 1e-308, maximum: RAW('1e999') }],
  ],
};
/** A value of any JSON type: one of each kind. */
REPLACEMENTS.any = [
  ...REPLACEMENTS.string!.slice(0, 3),
  ...REPLACEMENTS.number!,
  ...REPLACEMENTS.object!.slice(1),
  ['[] for any value', []],
];

function setAt(root: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (typeof head === 'number') {
    const list = Array.isArray(root) ? [...root] : [];
    list[head] = setAt(list[head], rest, value);
    return list;
  }
  const object = root && typeof root === 'object' && !Array.isArray(root) ? { ...(root as object) } : {};
  (object as Record<string, unknown>)[head] = setAt((object as Record<string, unknown>)[head], rest, value);
  return object;
}

// ---- cases ----

interface Case {
  label: string;
  path: string;
  headers: Record<string, string>;
  /** A body, or a chunked body of `chunked` bytes (no Content-Length). */
  body?: string | Buffer;
  chunked?: number;
}

/** The fixtures an operation's requests name: fresh per operation and app. */
interface Fixtures {
  values: Record<string, string[]>;
  /** A running execution (its agent holds the call until it is cancelled). */
  executionId: string;
  /** The approval request pending on it; the examples' `approval_request_id` becomes this. */
  approvalId: string;
  /** Lets go of what the fixtures hold once the operation is done. */
  release(): Promise<void>;
}

let approvals = 0;

/** Sends a request whose answer does not matter (setup and clean-up that may find nothing to do). */
function attempt(app: AppUnderTest, method: string, path: string, body?: unknown) {
  return fetch(`${app.base}${path}`, {
    method,
    headers: { ...app.auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(
    (response) => response.text(),
    () => undefined,
  );
}

/**
 * A running execution: a synchronous call to a function whose agent holds the request (the
 * dispatcher does not run in these apps, so a queued execution would never start).
 */
async function runningExecution(app: AppUnderTest): Promise<string> {
  const before = agent.calls.length;
  void attempt(app, 'POST', `/api/v1/execute/${EXEC_NODE}.hang`, { input: {} });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const call = agent.calls.slice(before).find((c) => c.fn === 'hang' && c.executionId);
    if (call?.executionId) return call.executionId;
    if (Date.now() > deadline) throw new Error('the agent never received the call of a running execution');
    await new Promise((done) => setTimeout(done, 10));
  }
}

async function fixturesFor(app: AppUnderTest, op: Operation): Promise<Fixtures> {
  const executionId = await runningExecution(app);
  const approvalId = `fuzz-approval-${process.pid}-${++approvals}`;
  if (op.template === '/api/v1/webhooks/approval') {
    await must(app, 'POST', `/api/v1/executions/${executionId}/request-approval`, {
      approval_request_id: approvalId,
    });
  }
  if (op.template.includes('{config_name}')) {
    await must(app, 'PUT', `/api/v1/configs/${CONFIG_NAME}`, 'a: 1\n', 'text/yaml');
  }
  if (op.template.includes('{key}')) {
    await must(app, 'POST', '/api/v1/memory/vector/set', {
      key: VECTOR_KEY,
      embedding: [0.12, -0.48, 0.33, 0.91],
    });
  }
  if (op.template.includes('observability-webhook')) {
    await must(app, 'POST', '/api/v1/settings/observability-webhook', { url: `${sink.url}/collector` });
  }
  const values: Record<string, string[]> = {
    node_id: [op.template.includes('{execution_id}') ? EXEC_NODE : LIFE_NODE],
    target: [`${EXEC_NODE}.fn`, `${EXEC_NODE}.skill:sk`],
    execution_id: [executionId],
    workflow_id: [(await must(app, 'GET', `/api/v1/executions/${executionId}`)).workflow_id],
    key: [VECTOR_KEY],
    config_name: [CONFIG_NAME, STORED_CONFIG_NAME],
    id: [LIFE_NODE],
    version: ['1.0.0'],
  };
  return {
    values,
    executionId,
    approvalId,
    async release() {
      // Ends the held call if the operation left the execution running (409 when it did not).
      await attempt(app, 'POST', `/api/v1/executions/${executionId}/cancel`);
    },
  };
}

/** Path segments no resource has: encodings, traversal, overlong, prototype names. */
const GARBAGE_SEGMENTS = [
  '%00',
  '..%2F..%2Fetc%2Fpasswd',
  'x'.repeat(3000),
  '%E0%A4%A',
  '%ED%A0%80',
  '__proto__',
  'constructor',
  '%F0%9F%92%A9%20%27%22%3C%3E',
  '-1',
];
const GARBAGE_VALUES = [
  'x'.repeat(10_000),
  '\u00ff\u00fe latin-1',
  '',
  ' ',
  '-1',
  '1e999',
  'NaN',
  '__proto__',
];

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? 'missing');
}

/** The documented examples of one request content type, with URLs and ids pointed at fixtures. */
function examplesOf(content: Json, fixtures: Fixtures): unknown[] {
  const raw =
    content.example !== undefined
      ? [content.example]
      : Object.values<Json>(content.examples ?? {}).map((example) => resolve(example).value);
  const localise = (value: unknown, key?: string): unknown => {
    if (key === 'approval_request_id' && typeof value === 'string') return fixtures.approvalId;
    if (typeof value === 'string') {
      if (/^https?:\/\//.test(value)) return value.replace(/^https?:\/\/[^/]+/, sink.url);
      if (/^exec_[0-9a-z]{26}$/.test(value)) return fixtures.executionId;
      return value;
    }
    if (Array.isArray(value)) return value.map((item) => localise(item));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, localise(v, k)]));
    }
    return value;
  };
  return raw.filter((value) => value !== undefined).map((value) => localise(value));
}

/** YAML a stored-config operation must refuse or store without a 5xx. */
const YAML_BODIES: Array<[string, string]> = [
  [
    'YAML alias bomb',
    `a: &a ["x","x","x","x","x","x","x","x","x"]\n${Array.from(
      { length: 9 },
      (_, i) =>
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(',')}]`,
    ).join('\n')}\n`,
  ],
  ['YAML nested 1,000 levels', `${'['.repeat(1000)}${']'.repeat(1000)}\n`],
  [
    'YAML with a custom tag',
    'a: !!js/function "function () { return 1 }"\nb: !<tag:yaml.org,2002:python/object> {}\n',
  ],
  ['YAML __proto__ key', '__proto__:\n  polluted: true\nconstructor:\n  prototype:\n    polluted: true\n'],
  ['YAML huge number', `a: 1e999\nb: ${'9'.repeat(400)}\n`],
  ['YAML NUL byte', 'a: "x\\0y"\nb: x\u0000y\n'],
  ['YAML duplicate keys', 'a: 1\na: 2\n'],
  ['YAML tab indentation', 'a:\n\tb: 1\n'],
  ['invalid UTF-8', Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x0a]).toString('latin1')],
];

interface Body {
  label: string;
  type?: string;
  body?: string | Buffer;
  chunked?: number;
  /** One of the few sent with garbage in the path, and to operations where an API key changes nothing past authentication. */
  core?: boolean;
}

/**
 * The requests of one operation. `largestLimit` is the largest body limit any operation documents:
 * one whose limit the document does not state in bytes gets a body over that. `scope` `core`
 * sends only the core bodies (see Body).
 */
function casesFor(
  op: Operation,
  fixtures: Fixtures,
  app: AppUnderTest,
  largestLimit: number,
  scope: 'full' | 'core',
): Case[] {
  const cases: Case[] = [];
  const pathParams = op.parameters.filter((p) => p.in === 'path').map((p) => p.name as string);
  const headerParams = op.parameters.filter((p) => p.in === 'header').map((p) => p.name as string);
  const queryParams = op.parameters.filter((p) => p.in === 'query').map((p) => p.name as string);
  const connector = /^\/(api\/v1\/)?connector\//.test(op.template);
  const auth = connector ? { 'X-Connector-Token': CONNECTOR_TOKEN } : app.auth;
  const content: Record<string, Json> = resolve(op.operation.requestBody)?.content ?? {};
  // Without a documented byte limit: over every limit of a body that is read, and over the
  // platform's default for an operation that reads none.
  const limit = documentedLimit(op) ?? (op.operation.requestBody ? largestLimit : DEFAULT_BODY_LIMIT);

  // Paths: every combination of existing values, then garbage in all parameters at once and, for
  // several parameters, in each one alone.
  const combos = pathParams.reduce<Array<Record<string, string>>>(
    (acc, name) => acc.flatMap((partial) => fixtures.values[name]!.map((v) => ({ ...partial, [name]: v }))),
    [{}],
  );
  const existing = combos.map((values): [string, string] => [
    JSON.stringify(values),
    fill(op.template, values),
  ]);
  const garbage: Array<[string, string]> = [];
  if (pathParams.length > 0) {
    for (const segment of GARBAGE_SEGMENTS) {
      const all = Object.fromEntries(pathParams.map((name) => [name, segment]));
      garbage.push([`all path parameters ${JSON.stringify(segment.slice(0, 40))}`, fill(op.template, all)]);
    }
    if (pathParams.length > 1) {
      for (const name of pathParams) {
        garbage.push([`${name} garbage`, fill(op.template, { ...combos[0]!, [name]: '%00x' })]);
      }
    }
  }

  // Whole bodies.
  const jsonType = Object.keys(content).find((type) => /json/.test(type)) ?? 'application/json';
  const textTypes = Object.keys(content).filter((type) => !/json/.test(type));
  const bodies: Body[] = [];
  const json = (label: string, body: string | Buffer, core = false) =>
    bodies.push({ label, type: jsonType, body, core });
  bodies.push({ label: 'no body', core: true });
  bodies.push({ label: 'empty body as JSON', type: 'application/json', body: '', core: true });
  for (const text of ['null', '[]', '{}']) json(text, text, true);
  for (const text of ['""', '0', 'true', '"text"', '-1e999']) json(text, text);
  json('invalid JSON "{\\"a\\":"', '{"a":', true);
  for (const text of ["{'a':1}", '{}x', '[1,]', '\ufeff{}', '{"a":1,"a":2}', '\u0000']) {
    json(`invalid JSON ${JSON.stringify(text)}`, text);
  }
  json('1,000 nested arrays', `${'['.repeat(1000)}${']'.repeat(1000)}`, true);
  json('1,000 nested objects', `${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`, true);
  json('__proto__ member', '{"__proto__":{"polluted":true}}', true);
  json('constructor member', '{"constructor":{"prototype":{"polluted":true}}}');
  json('NUL and lone surrogate members', '{"\\u0000":"\\ud800","a":"\\udfff\\u0000"}');
  json('invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
  const oversized = serialise({ pad: 'x'.repeat(limit) });
  json(`${oversized.length} bytes (limit ${limit})`, oversized, true);
  bodies.push({
    label: `chunked ${limit + 1} bytes (limit ${limit})`,
    type: jsonType,
    chunked: limit + 1,
    core: true,
  });
  bodies.push({ label: 'JSON as text/plain', type: 'text/plain', body: '{}', core: true });
  bodies.push({ label: 'form data', type: 'application/x-www-form-urlencoded', body: 'a=1&__proto__[x]=1' });
  bodies.push({ label: 'multipart', type: 'multipart/form-data; boundary=x', body: '--x\r\n\r\n--x--' });
  bodies.push({ label: 'JSON with a bogus charset', type: 'application/json; charset=utf-7', body: '{}' });
  for (const type of textTypes) {
    for (const [index, [label, text]] of YAML_BODIES.entries()) {
      bodies.push({ label: `${label} as ${type}`, type, body: text, core: index < 2 });
    }
    bodies.push({
      label: `${limit + 1} bytes as ${type}`,
      type,
      body: `a: ${'x'.repeat(limit)}\n`,
      core: true,
    });
  }

  // The examples, and each schema field of them replaced.
  for (const [type, media] of Object.entries<Json>(content)) {
    const examples = examplesOf(media, fixtures);
    const isJson = /json/.test(type);
    const encode = (value: unknown) => (isJson ? serialise(value) : String(value));
    for (const [index, example] of examples.entries()) {
      bodies.push({ label: `example ${index} as ${type}`, type, body: encode(example), core: true });
    }
    if (!isJson) {
      const example = String(examples[0] ?? '');
      for (const [label, value] of REPLACEMENTS.string!) {
        bodies.push({ label: `${type} body: ${label}`, type, body: `${example}a: "${value}"\n` });
      }
      continue;
    }
    const example = examples[0] ?? {};
    for (const field of fieldsOf(media.schema)) {
      const where = field.path.join('.');
      const replaced = (label: string, value: unknown) =>
        bodies.push({ label: `${where} = ${label}`, type, body: encode(setAt(example, field.path, value)) });
      replaced('null', null);
      replaced('nested 60 levels', nest(60));
      for (const kind of field.kinds) {
        for (const [label, value] of REPLACEMENTS[kind] ?? []) replaced(label, value);
      }
    }
  }

  const add = (label: string, path: string, body: Body, headers: Record<string, string> = {}) =>
    cases.push({
      label,
      path,
      headers: { ...auth, ...(body.type ? { 'content-type': body.type } : {}), ...headers },
      body: body.body,
      chunked: body.chunked,
    });
  const core = bodies.filter((body) => body.core);
  for (const [where, path] of existing) {
    for (const body of scope === 'full' ? bodies : core) add(`${where} ${body.label}`, path, body);
  }
  const base = bodies.find((b) => b.label.startsWith('example 0')) ?? bodies[0]!;
  for (const [index, [where, path]] of garbage.entries()) {
    for (const body of index === 0 ? core : [base, bodies[0]!]) add(`${where} ${body.label}`, path, body);
  }
  const mainUrl = existing[0]![1];
  if (scope === 'full') {
    for (const name of headerParams) {
      for (const value of GARBAGE_VALUES) {
        add(`header ${name}: ${JSON.stringify(value.slice(0, 20))} ${base.label}`, mainUrl, base, {
          [name]: value,
        });
      }
      add(`header ${name}: a fresh execution id`, mainUrl, base, { [name]: fixtures.executionId });
    }
    for (const name of queryParams) {
      for (const value of ['%00', 'x'.repeat(5000), '%E0%A4%A', '__proto__', 'a&a=b', '%ED%A0%80']) {
        add(`query ${name}=${value.slice(0, 20)}`, `${mainUrl}?${name}=${value}`, base);
      }
      add(`query ${name} twice`, `${mainUrl}?${name}=global&${name}=workflow`, base);
    }
    add('query __proto__', `${mainUrl}?__proto__[x]=1&constructor[prototype][x]=1`, base);
  }
  if (app.auth['X-API-Key'] || connector) {
    // The key (or token) wrong or missing: refused before the body is read, whatever it is.
    const wrong = { 'X-API-Key': 'nope', 'X-Connector-Token': 'nope', 'content-type': 'application/json' };
    cases.push({ label: 'wrong key, oversized body', path: mainUrl, headers: wrong, body: oversized });
    cases.push({
      label: 'no key',
      path: mainUrl,
      headers: { 'content-type': base.type ?? 'application/json' },
      body: base.body,
    });
  }
  return cases;
}

/** `depth` levels of arrays and objects in turn, under the 64-level limit of a whole body. */
function nest(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

// ---- sending ----

interface Outcome {
  status: number | 'dropped';
  detail: string;
  /** What is wrong with the answer according to the document (status, content type, schema). */
  undocumented: string[];
}

async function send(app: AppUnderTest, method: string, c: Case): Promise<Outcome> {
  let last = '';
  // A body the server refused before reading it may be cut off while the client still sends
  // (EPIPE): asked again up to three times; a server that drops every attempt fails the case.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const init: RequestInit & { duplex?: 'half' } = { method, headers: c.headers };
      if (c.chunked !== undefined) {
        const size = c.chunked;
        init.body = new ReadableStream({
          start(controller) {
            const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
            controller.enqueue(new TextEncoder().encode('{"pad":"'));
            for (let sent = 0; sent < size; sent += chunk.length) controller.enqueue(chunk);
            controller.enqueue(new TextEncoder().encode('"}'));
            controller.close();
          },
        });
        init.duplex = 'half';
      } else if (c.body !== undefined) {
        init.body = typeof c.body === 'string' ? Buffer.from(c.body, 'utf8') : c.body;
      }
      const response = await fetch(`${app.base}${c.path}`, init);
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: checked as text
      }
      const path = new URL(`${app.base}${c.path}`).pathname;
      const undocumented = validator.problemsOf({
        method,
        path,
        status: response.status,
        contentType: response.headers.get('content-type'),
        body,
      });
      // Each status the operation answers must be listed, not only matched by `default`.
      const found = validator.operationFor(method, path);
      if (found && !found.operation.responses?.[String(response.status)]) {
        undocumented.push(`${method} ${found.template} → ${response.status}: status not listed`);
      }
      return { status: response.status, detail: text.slice(0, 300), undocumented };
    } catch (error) {
      last = String((error as Error & { cause?: unknown }).cause ?? error);
    }
  }
  return { status: 'dropped', detail: last, undocumented: [] };
}

async function pool<T>(items: T[], worker: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
      while (next < items.length) await worker(items[next++] as T);
    }),
  );
}

describe('every write operation under hostile requests', () => {
  it('finds the write operations in the document', () => {
    const ops = writeOperations();
    // A document that lost its operations would make the fuzzing below pass without testing.
    expect(ops.length).toBeGreaterThanOrEqual(45);
  });

  for (const which of [0, 1] as const) {
    it(`answers none of them with a 5xx, a dropped connection or an answer the document does not list (${which === 0 ? 'without an API key' : 'with an API key and an approval webhook secret'})`, {
      timeout: 300_000,
    }, async () => {
      const app = apps[which]!;
      const failures: string[] = [];
      const undocumented: string[] = [];
      let sent = 0;
      const started = Date.now();
      const largestLimit = Math.max(...writeOperations().map((op) => documentedLimit(op) ?? 0));
      for (const op of writeOperations()) {
        const fixtures = await fixturesFor(app, op);
        const scope =
          app.auth['X-API-Key'] && !KEY_DEPENDENT.has(`${op.method} ${op.template}`) ? 'core' : 'full';
        const cases = casesFor(op, fixtures, app, largestLimit, scope);
        await pool(cases, async (c) => {
          const logged = app.errors.length;
          const outcome = await send(app, op.method, c);
          sent += 1;
          if (outcome.undocumented.length > 0) {
            const body =
              c.chunked !== undefined ? `<chunked ${c.chunked} bytes>` : String(c.body ?? '<none>');
            undocumented.push(
              `${op.method} ${op.template} [${c.label}]\n  body: ${body.slice(0, 200)}\n  → ${outcome.undocumented.join('; ').slice(0, 500)}`,
            );
          }
          if (outcome.status === 'dropped' || outcome.status >= 500) {
            const log = app.errors
              .slice(logged)
              .map((line) => {
                const err = line.err as { message?: string; stack?: string } | undefined;
                return (err?.stack ?? err?.message ?? String(line.msg))
                  .split('\n')
                  .slice(0, 4)
                  .join(' ')
                  .slice(0, 600);
              })
              .join(' | ');
            const body =
              c.chunked !== undefined ? `<chunked ${c.chunked} bytes>` : String(c.body ?? '<none>');
            failures.push(
              `${op.method} ${op.template} [${c.label}] ${op.method} ${c.path.slice(0, 200)}\n` +
                `  body: ${body.slice(0, 300)}\n  → ${outcome.status} ${outcome.detail}\n  log: ${log}`,
            );
          }
        });
        await fixtures.release();
      }
      console.info(`${app.name}: ${sent} requests in ${Date.now() - started} ms`);
      expect(failures.length, `${failures.length} failures:\n${failures.join('\n')}`).toBe(0);
      expect(
        undocumented.length,
        `${undocumented.length} answers the document does not describe:\n${undocumented.join('\n')}`,
      ).toBe(0);
    });
  }
});
