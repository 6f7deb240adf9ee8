/**
 * The compose deployment: compose.yaml runs PostgreSQL (an image with pgvector), two control-plane
 * replicas and the docs server. No container engine runs here, so this test holds compose.yaml to the
 * files it names and then runs its services the way compose would, as processes:
 *
 * - Coherence (always): every build context and Dockerfile exists; every build arg is an ARG of its
 *   Dockerfile; every environment variable a service or its image sets is a setting its app reads
 *   (the control plane's SETTINGS in apps/control-plane/src/config.ts, the docs server's in
 *   apps/docs/server/settings.ts); every published container port is EXPOSEd by the image and is
 *   the port the image's settings listen on; PostgreSQL is a pgvector image with a healthcheck and
 *   a named volume; the apps wait for it to be healthy and reach it at the user, password and
 *   database it creates; the images have a HEALTHCHECK; SERVICE_API_KEY is required.
 * - Running (PostgreSQL only: the file runs PostgreSQL, and two replicas cannot share PGlite's
 *   files): each app service's command is its image's CMD, run from the repository root (the
 *   image's WORKDIR holds the same layout) with the built apps of this checkout, and its
 *   environment is the image's ENV overlaid with the service's, interpolated as compose does.
 *   Translated, and nothing else: the `db` host becomes a throwaway database of DATABASE_URL,
 *   each container port a free loopback port (0.0.0.0 becomes 127.0.0.1), and the /data volume a
 *   temporary directory. Both replicas start at once (as compose starts them once db is healthy) on
 *   a fresh database, so the migrations' advisory lock is exercised; both turn healthy; an agent
 *   registered through the first is in the second's discovery; the docs server answers pages and
 *   stores a share in the same database.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTINGS as DOCS_SETTINGS } from '@switchyard/docs/server/settings.ts';
import { DOCS_URL_ENV } from '@switchyard/shared';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SETTINGS as CONTROL_PLANE_SETTINGS } from '../../apps/control-plane/src/config.ts';
import {
  type ExecutionAgent,
  startExecutionAgent,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';
import { finalImage } from './image-steps.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POSTGRES = Boolean(process.env.DATABASE_URL);
/** Set by every image for Node itself (production mode of libraries); no app setting. */
const NODE_ITSELF = new Set(['NODE_ENV']);

/** What each app's image is: where its Dockerfile is, what it reads, where it listens. */
const APPS = {
  'apps/control-plane/Dockerfile': {
    // Its settings, and the docs base its error documents link to (read by the shared package).
    settings: new Set([...CONTROL_PLANE_SETTINGS.map((s) => s.env), DOCS_URL_ENV]),
    portEnv: 'CONTROL_PLANE_PORT',
    hostEnv: 'CONTROL_PLANE_HOST',
    healthPath: '/api/v1/health',
  },
  'apps/docs/Dockerfile': {
    settings: new Set<string>(DOCS_SETTINGS.map((s) => s.env)),
    portEnv: 'DOCS_PORT',
    hostEnv: 'DOCS_HOST',
    healthPath: '/docs/getting-started/overview',
  },
} as const;
type AppDockerfile = keyof typeof APPS;

// ---- compose.yaml as compose reads it --------------------------------------------------------

/**
 * Compose's variable interpolation, for the forms compose.yaml uses: `${NAME}`, `${NAME:-default}`,
 * `${NAME-default}`, `${NAME:?message}`, `${NAME?message}` and `$$`. Hand-written: no maintained
 * JavaScript package implements the Compose specification's interpolation; any other form is
 * refused, so a new one in the file cannot be read wrongly here.
 */
function interpolate(text: string, vars: Record<string, string | undefined>): string {
  return text.replace(/\$\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced, bare) => {
    if (whole === '$$') return '$';
    if (bare !== undefined) return vars[bare] ?? '';
    const form = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])(.*))?$/s.exec(braced);
    if (!form) throw new Error(`compose.yaml: unsupported interpolation ${whole}`);
    const [, name, colon, operator, operand] = form;
    const value = vars[name!];
    const missing = colon ? !value : value === undefined;
    if (!operator) return value ?? '';
    if (!missing) return value!;
    if (operator === '-') return operand!;
    throw new Error(`required variable ${name} is missing a value: ${operand}`);
  });
}

/** Every string of a parsed document interpolated (compose interpolates values, not keys). */
function interpolateAll(value: unknown, vars: Record<string, string | undefined>): unknown {
  if (typeof value === 'string') return interpolate(value, vars);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, vars)]));
  }
  return value;
}

const COMPOSE_TEXT = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');

/** compose.yaml parsed (merge keys `<<` applied, as compose does) and interpolated with `vars`. */
function composeFile(vars: Record<string, string | undefined>): any {
  return interpolateAll(parse(COMPOSE_TEXT, { merge: true }), vars);
}

/** A service's `environment`, in either of compose's two spellings (map or `NAME=value` list). */
function environmentOf(service: any): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry: string) => {
        const at = entry.indexOf('=');
        return at === -1 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v ?? '')]));
}

/** `"8080:8080"` → host and container port (the short syntax the file uses; tcp only). */
function portMapping(entry: unknown): { host: number; container: number } {
  const match = /^(?:(\d+):)?(\d+)$/.exec(String(entry));
  if (!match) throw new Error(`compose.yaml: a port mapping this test cannot read: ${String(entry)}`);
  return { host: Number(match[1] ?? match[2]), container: Number(match[2]) };
}

// ---- coherence ---------------------------------------------------------------------------------

const API_KEY = `compose-${randomBytes(12).toString('hex')}`;
const VARS = { SWITCHYARD_API_KEY: API_KEY };
const compose = composeFile(VARS);
const services: Record<string, any> = compose.services ?? {};
const appServices = Object.entries(services).filter(([, service]) => service.build);

/** The Dockerfile of a service with `build`, relative to the repository root. */
function dockerfileOf(service: any): string {
  const build = typeof service.build === 'string' ? { context: service.build } : service.build;
  return join(build.context ?? '.', build.dockerfile ?? 'Dockerfile');
}

describe('compose.yaml', () => {
  it('refuses to start without SWITCHYARD_API_KEY, saying what to set', () => {
    expect(() => composeFile({})).toThrow(/SWITCHYARD_API_KEY.*set SWITCHYARD_API_KEY/);
    expect(() => composeFile({ SWITCHYARD_API_KEY: '' })).toThrow(/SWITCHYARD_API_KEY/);
  });

  it('runs PostgreSQL from a pgvector image with a healthcheck and a named volume', () => {
    const db = services.db;
    expect(db, 'a service named db').toBeDefined();
    expect(db.image).toMatch(/^pgvector\/pgvector:pg\d+$/);
    const test = db.healthcheck?.test;
    // Over TCP: on a new volume the image first runs a temporary server on the Unix socket only,
    // which a socket pg_isready reports ready before the server the apps reach listens.
    expect(Array.isArray(test) ? test.join(' ') : test).toMatch(/pg_isready .*-h (127\.0\.0\.1|localhost)\b/);
    const volume = String(db.volumes?.[0] ?? '').split(':');
    expect(volume[1]).toBe('/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes ?? {})).toContain(volume[0]);
  });

  it('has two control-plane replicas built from the same Dockerfile with the same settings, and the docs server', () => {
    const byDockerfile = (file: string) =>
      appServices.filter(([, service]) => dockerfileOf(service) === file).map(([name]) => name);
    const replicas = byDockerfile('apps/control-plane/Dockerfile');
    expect(replicas).toHaveLength(2);
    const [first, second] = replicas.map((name) => services[name]);
    expect(environmentOf(second)).toEqual(environmentOf(first));
    expect(second.build).toEqual(first.build);
    expect(byDockerfile('apps/docs/Dockerfile')).toHaveLength(1);
    expect(appServices).toHaveLength(3);
  });

  for (const [name, service] of appServices) {
    describe(`service ${name}`, () => {
      const dockerfile = dockerfileOf(service) as AppDockerfile;
      const app = APPS[dockerfile];

      it('builds from a context and Dockerfile that exist, with build args the Dockerfile declares', () => {
        expect(app, `${dockerfile} is one of the apps' Dockerfiles`).toBeDefined();
        const context = typeof service.build === 'string' ? service.build : (service.build.context ?? '.');
        expect(statSync(resolve(ROOT, context)).isDirectory()).toBe(true);
        expect(existsSync(join(ROOT, dockerfile)), `${dockerfile} exists`).toBe(true);
        const image = finalImage(ROOT, dockerfile);
        for (const arg of Object.keys(service.build.args ?? {})) {
          expect([...image.args.keys()], `--build-arg ${arg}`).toContain(arg);
        }
      });

      it('sets only settings its app reads, in the service and in the image', () => {
        const image = finalImage(ROOT, dockerfile, service.build.args);
        const unknown = [...Object.keys(environmentOf(service)), ...image.env.keys()].filter(
          (env) => !app.settings.has(env) && !NODE_ITSELF.has(env),
        );
        expect(unknown).toEqual([]);
      });

      it('publishes the port the image EXPOSEs and listens on, on every interface', () => {
        const image = finalImage(ROOT, dockerfile, service.build.args);
        const ports = (service.ports ?? []).map(portMapping);
        expect(ports).toHaveLength(1);
        expect(image.exposed).toContain(ports[0]!.container);
        expect(image.env.get(app.portEnv)).toBe(String(ports[0]!.container));
        expect(image.env.get(app.hostEnv)).toBe('0.0.0.0');
      });

      it('waits for a healthy database and reaches it as the user, password and database db creates', () => {
        expect(service.depends_on?.db?.condition).toBe('service_healthy');
        const url = new URL(environmentOf(service).DATABASE_URL!);
        const db = environmentOf(services.db);
        expect(url.protocol).toBe('postgres:');
        expect(url.hostname).toBe('db');
        expect(url.port).toBe('5432');
        expect(decodeURIComponent(url.username)).toBe(db.POSTGRES_USER);
        expect(decodeURIComponent(url.password)).toBe(db.POSTGRES_PASSWORD);
        expect(url.pathname).toBe(`/${db.POSTGRES_DB}`);
      });

      it('is health-checked by its image and stopped by the image CMD being node itself', () => {
        const image = finalImage(ROOT, dockerfile, service.build.args);
        expect(image.healthcheck || Boolean(service.healthcheck)).toBe(true);
        expect(image.cmd[0]).toBe('node');
        expect(image.cmd).not.toContain('tsx');
        expect(image.workdir).toBeDefined();
      });
    });
  }

  it('publishes each service on a host port of its own', () => {
    const hostPorts = appServices
      .flatMap(([, service]) => (service.ports ?? []).map(portMapping))
      .map((p) => p.host);
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });
});

// ---- running the services as processes ----------------------------------------------------------

interface RunningService {
  name: string;
  url: string;
  process: RunningProcess;
  dataDir: string;
}

let database: ThrowawayDatabase | undefined;
const running: RunningService[] = [];
let agent: ExecutionAgent | undefined;

/**
 * Starts one app service as compose would run its container: the image's CMD with the image's ENV
 * overlaid by the service's environment, translated to this machine (see the file's comment).
 */
async function startService(name: string, service: any, databaseUrl: string): Promise<RunningService> {
  const dockerfile = dockerfileOf(service) as AppDockerfile;
  const app = APPS[dockerfile];
  const image = finalImage(ROOT, dockerfile, service.build.args);
  const env: Record<string, string> = { ...Object.fromEntries(image.env), ...environmentOf(service) };
  const port = await freePort();
  const container = portMapping(service.ports[0]).container;
  expect(env[app.portEnv]).toBe(String(container));
  env[app.portEnv] = String(port);
  env[app.hostEnv] = '127.0.0.1';
  expect(new URL(env.DATABASE_URL!).hostname).toBe('db');
  env.DATABASE_URL = databaseUrl;
  const dataDir = mkdtempSync(join(tmpdir(), `sy-compose-${name}-`));
  expect(image.volumes).toContain(env.SWITCHYARD_DATA_DIR);
  env.SWITCHYARD_DATA_DIR = dataDir;
  // The CMD's paths are relative to the image's WORKDIR, which holds the repository's layout.
  const [command, ...args] = image.cmd;
  expect(command).toBe('node');
  const script = args.find((arg) => !arg.startsWith('-'))!;
  expect(existsSync(join(ROOT, script)), `${script}: build it first (npm run build -w <app>)`).toBe(true);
  const child = startNode(args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env } });
  return { name, url: `http://127.0.0.1:${port}`, process: child, dataDir };
}

async function healthy(service: RunningService, path: string): Promise<void> {
  await eventually(
    `${service.name} answers ${path} with 200`,
    async () => {
      if (service.process.child.exitCode !== null) throw new Error(`${service.name} exited`);
      const response = await fetch(`${service.url}${path}`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return response.status === 200 ? true : undefined;
    },
    () => service.process.output(),
    90_000,
  );
}

describe('compose.yaml run as processes', () => {
  beforeAll(async () => {
    if (!POSTGRES) return;
    database = await throwawayDatabase('sy_compose');
    // Started together, as compose starts every service whose dependency turned healthy.
    running.push(
      ...(await Promise.all(
        appServices.map(([name, service]) => startService(name, service, database!.url!)),
      )),
    );
  });

  afterAll(async () => {
    await agent?.close();
    await Promise.all(running.map((service) => service.process.stop('SIGTERM')));
    await database?.drop();
    for (const service of running) rmSync(service.dataDir, { recursive: true, force: true });
  });

  it.skipIf(!POSTGRES)(
    `turns every service healthy; an agent registered through one replica is in the other's discovery; the docs answer and keep shares in the same database (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, the file runs PostgreSQL and PGlite serves one process'})`,
    { timeout: 150_000 },
    async () => {
      for (const service of running) {
        await healthy(service, APPS[dockerfileOf(services[service.name]) as AppDockerfile].healthPath);
      }
      const replicas = running.filter(
        (s) => dockerfileOf(services[s.name]) === 'apps/control-plane/Dockerfile',
      );
      const docs = running.find((s) => dockerfileOf(services[s.name]) === 'apps/docs/Dockerfile')!;
      const [first, second] = replicas as [RunningService, RunningService];

      // SERVICE_API_KEY reached both: without it the API refuses, with it discovery answers.
      const refused = await fetch(`${second.url}/api/v1/discovery/capabilities`);
      expect(refused.status).toBe(401);
      await refused.arrayBuffer();

      const nodeId = `compose-agent-${randomBytes(3).toString('hex')}`;
      agent = await startExecutionAgent({
        controlPlaneUrl: first.url,
        nodeId,
        apiKey: API_KEY,
        reasoners: { work: { kind: 'answer' } },
      });
      await agent.register();
      const found = await eventually(
        `${nodeId} in ${second.name}'s discovery`,
        async () => {
          const response = await fetch(`${second.url}/api/v1/discovery/capabilities?agent=${nodeId}`, {
            headers: { 'x-api-key': API_KEY },
          });
          const body = (await response.json()) as any;
          return response.status === 200 && body.capabilities?.length === 1 ? body : undefined;
        },
        () => `${first.process.output()}\n${second.process.output()}`,
      );
      expect(found.capabilities[0]).toMatchObject({ agent_id: nodeId });
      expect(found.capabilities[0].reasoners[0]).toMatchObject({ invocation_target: `${nodeId}.work` });

      // The docs server: a page, and a share stored in the database compose gives it.
      const published = await fetch(`${docs.url}/api/v1/shares`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          version: 1,
          workflow_id: 'wf_compose',
          title: 'Compose test run',
          generated_at: new Date().toISOString(),
          totals: { nodes: 1 },
          nodes: [{ execution_id: 'ex_1', target: `${nodeId}.work`, status: 'succeeded', duration_ms: 3 }],
          edges: [],
        }),
      });
      const share = (await published.json()) as { id: string };
      expect(published.status, JSON.stringify(share)).toBe(201);
      const db = await openDatabase({ url: database!.url, poolMax: 1 });
      try {
        const stored = await db.raw('select count(*)::int as n from run_shares where id = ?', [share.id]);
        expect(stored.rows[0].n).toBe(1);
      } finally {
        await db.destroy();
      }
      const permalink = await fetch(`${docs.url}/s/${share.id}`, { headers: { accept: 'application/json' } });
      expect(permalink.status).toBe(200);
      expect(((await permalink.json()) as any).title).toBe('Compose test run');
    },
  );
});
