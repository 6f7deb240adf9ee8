/**
 * The deployment pages (container, compose, plain Node) hold only commands that work: a test runs
 * every one of them.
 * Each ```bash block of the two deployment pages is taken in page order:
 *
 * - The plain-Node commands run for real, as a reader would run them, on two scratch "machines":
 *   a build machine (a copy of this checkout's sources and manifests, sharing its installed
 *   node_modules read-only through a link; the docs app's own small node_modules is copied so the
 *   site build's caches stay in the copy) and a server (an empty directory the package is copied
 *   to, with its own production install from the npm registry). The build, the `tar` package, the
 *   production install and the server are all real; the server must answer its health check (the
 *   control plane) or the page's checks (the docs), log what the page shows, and stop gracefully
 *   on SIGTERM.
 * - `docker build`, `docker run` and `docker compose` cannot run here (no container engine). Each is
 *   checked against the files it uses instead: the Dockerfile exists; every `--build-arg` is an
 *   ARG of it; the image `docker run` starts is one the page built; every `-e` is a setting of
 *   that app; every published container port is EXPOSEd; every `-v` mounts a VOLUME of the image;
 *   compose variables are ones compose.yaml reads and services are ones it defines. The images'
 *   own steps are reproduced by control-plane-image.test.ts (image-steps.ts), and compose.yaml's
 *   services are run as processes by compose.test.ts.
 *
 * Substituted in the commands, and nothing else: the page's PostgreSQL URL becomes a throwaway
 * database of DATABASE_URL (empty, so the embedded database, without it); `0.0.0.0` and the
 * page's ports become 127.0.0.1 and free ports; `/run/secrets/switchyard_api_key` a file in the
 * scratch directory; and `https://docs.example.com` in the docs checks the server under test
 * (the build and the server still get https://docs.example.com as SITE_URL, as the page says).
 *
 * Needs bash, tar, curl and access to the npm registry (the production installs).
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTINGS as DOCS_SETTINGS } from '@switchyard/docs/server/settings.ts';
import { DOCS_URL_ENV } from '@switchyard/shared';
import { DockerfileParser } from 'dockerfile-ast';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SETTINGS as CONTROL_PLANE_SETTINGS } from '../../apps/control-plane/src/config.ts';
import {
  type BackgroundCommand,
  type CommandExample,
  commandExamples,
  IdMap,
  runShell,
  shapeDifferences,
  startShell,
} from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';
import { finalImage } from './image-steps.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POSTGRES = Boolean(process.env.DATABASE_URL);
const PAGE_DATABASE_URL = 'postgres://switchyard:secret@db.internal:5432/switchyard';
const PAGE_SECRET_FILE = '/run/secrets/switchyard_api_key';
const PAGE_SITE = 'https://docs.example.com';

/** Each app as its image and its settings know it. */
const APPS = {
  // Its settings, and the docs base its error documents link to (read by the shared package).
  'apps/control-plane/Dockerfile': new Set([...CONTROL_PLANE_SETTINGS.map((s) => s.env), DOCS_URL_ENV]),
  'apps/docs/Dockerfile': new Set<string>(DOCS_SETTINGS.map((s) => s.env)),
} as Record<string, Set<string>>;

// ---- what the docker commands name ------------------------------------------------------------

/** The facts of a Dockerfile a docker command is checked against (ARGs, EXPOSE, VOLUME). */
function dockerfileFacts(dockerfile: string) {
  return finalImage(ROOT, dockerfile);
}

/**
 * A command line as the shell splits it into words: continuations joined, quotes removed, and
 * leading `NAME=value` assignments (a value may be a `$(…)` substitution) returned apart.
 * Hand-written for the plain words these pages use; no shell-quoting package is installed here.
 */
function shellWords(command: string): { assignments: Map<string, string>; words: string[] } {
  let text = command.replace(/\\\n\s*/g, ' ').trim();
  const assignments = new Map<string, string>();
  for (;;) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\$\([^)]*\)|\S*)\s+/.exec(text);
    if (!match) break;
    assignments.set(match[1]!, match[2]!);
    text = text.slice(match[0].length);
  }
  const words = [...text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  return { assignments, words };
}

/** Options of a docker subcommand: each `--flag value` (or `-f value`) in order, and the rest. */
function options(words: string[], takesValue: Set<string>, flags: Set<string>) {
  const found: Array<[string, string]> = [];
  const positional: string[] = [];
  const unknown: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (takesValue.has(word)) found.push([word, words[++i] ?? '']);
    else if (flags.has(word)) found.push([word, '']);
    else if (word.startsWith('-')) unknown.push(word);
    else positional.push(word);
  }
  return { found, positional, unknown };
}

/**
 * Why a docker command of a page would not work with this repository's files (empty when it
 * would). `built` maps the image tags the page's `docker build` commands made to their Dockerfile.
 */
function dockerProblems(command: string, built: Map<string, string>): string[] {
  const { assignments, words } = shellWords(command);
  if (words[0] !== 'docker') return [`not a docker command: ${command}`];
  const problems: string[] = [];
  if (words[1] === 'build') {
    const parsed = options(words.slice(2), new Set(['-f', '-t', '--build-arg']), new Set());
    problems.push(...parsed.unknown.map((flag) => `docker build: this test does not know ${flag}`));
    if (parsed.positional.length !== 1) return [...problems, 'docker build: expected one context'];
    const context = join(ROOT, parsed.positional[0]!);
    const file = parsed.found.find(([flag]) => flag === '-f')?.[1] ?? 'Dockerfile';
    const dockerfile = relative(ROOT, join(context, file));
    if (!existsSync(join(ROOT, dockerfile))) return [...problems, `${dockerfile} does not exist`];
    if (!APPS[dockerfile]) problems.push(`${dockerfile} is not one of the apps' Dockerfiles`);
    const { args } = dockerfileFacts(dockerfile);
    for (const [flag, value] of parsed.found) {
      if (flag === '--build-arg' && !args.has(value.split('=')[0]!))
        problems.push(`--build-arg ${value}: ${dockerfile} declares no ARG ${value.split('=')[0]}`);
      if (flag === '-t') built.set(value, dockerfile);
    }
    return problems;
  }
  if (words[1] === 'run') {
    const parsed = options(words.slice(2), new Set(['--name', '-p', '-e', '-v']), new Set(['-d']));
    problems.push(...parsed.unknown.map((flag) => `docker run: this test does not know ${flag}`));
    const image = parsed.positional[0];
    const dockerfile = image ? built.get(image) : undefined;
    if (!dockerfile) return [...problems, `docker run ${image}: the page builds no image of that name first`];
    const facts = dockerfileFacts(dockerfile);
    for (const [flag, value] of parsed.found) {
      if (flag === '-p') {
        const container = Number(value.split(':').at(-1));
        if (!facts.exposed.includes(container))
          problems.push(`-p ${value}: ${dockerfile} EXPOSEs ${facts.exposed.join(', ')}, not ${container}`);
      } else if (flag === '-e') {
        const name = value.split('=')[0]!;
        if (!APPS[dockerfile]!.has(name)) problems.push(`-e ${name}: not a setting the app reads`);
      } else if (flag === '-v') {
        const target = value.split(':')[1];
        if (!target || !facts.volumes.includes(target))
          problems.push(`-v ${value}: ${dockerfile} declares VOLUME ${facts.volumes.join(', ')}`);
      }
    }
    return problems;
  }
  if (words[1] === 'compose') {
    const composeText = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    const services = Object.keys(parse(composeText, { merge: true }).services);
    for (const name of assignments.keys()) {
      if (!composeText.includes(`\${${name}`)) problems.push(`${name}: compose.yaml does not read it`);
    }
    const subcommand = words[2];
    const flags = { up: new Set(['--build', '-d']), down: new Set<string>() }[subcommand as 'up' | 'down'];
    if (!flags) return [...problems, `docker compose ${subcommand}: this test does not know it`];
    const parsed = options(words.slice(3), new Set(), flags);
    problems.push(...parsed.unknown.map((flag) => `docker compose ${subcommand}: unknown ${flag}`));
    problems.push(
      ...parsed.positional
        .filter((s) => !services.includes(s))
        .map((s) => `compose.yaml has no service ${s}`),
    );
    return problems;
  }
  return [`this test does not know \`docker ${words[1]}\``];
}

// ---- the two machines -------------------------------------------------------------------------

const SOURCES = [
  'package.json',
  'package-lock.json',
  'tsconfig.base.json',
  'scripts',
  'content',
  'packages/shared',
  'packages/client',
  'apps/control-plane',
  'apps/dashboard',
  'apps/docs',
  'tests/package.json',
];
/** Never copied: installs, builds and their caches (a fresh checkout has none of them). */
const LEFT_OUT = new Set(['node_modules', 'dist', '.astro', '.data', '.turbo']);

/**
 * A build machine: this checkout's sources, its root node_modules linked (read-only use: the
 * bundler, astro), and the docs app's own node_modules copied, since the site build writes its
 * caches there and must not touch the checkout's.
 */
function makeCheckout(dir: string): void {
  for (const path of SOURCES) {
    cpSync(join(ROOT, path), join(dir, path), {
      recursive: true,
      filter: (source) => !LEFT_OUT.has(source.split('/').at(-1)!),
    });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const app of ['apps/control-plane', 'apps/docs']) {
    const own = join(ROOT, app, 'node_modules');
    if (!existsSync(own)) continue;
    cpSync(own, join(dir, app, 'node_modules'), {
      recursive: true,
      filter: (source) => !source.split('/').at(-1)!.startsWith('.'),
    });
  }
}

interface PageRun {
  page: string;
  /** Where the next command runs: the build machine's checkout, then the server's directory. */
  cwd: string;
  checkout: string;
  server: string;
  /** Image tags built by the page's docker build commands. */
  built: Map<string, string>;
  problems: string[];
}

/**
 * Runs a setup command (build, package, unpack, install) where the reader would: a command that
 * unpacks a `.tgz` runs on the server, to which the package is copied first. Afterwards the next
 * command runs in the directory this one ended in (a `cd` carries over, as in a terminal).
 */
async function runSetup(run: PageRun, example: CommandExample, command: string): Promise<string> {
  const unpack = /tar -xzf (\S+\.tgz)/.exec(command);
  if (unpack && run.cwd === run.checkout) {
    cpSync(join(run.checkout, unpack[1]!), join(run.server, unpack[1]!));
    run.cwd = run.server;
  }
  // `set -e`: a line that fails ends the step (what follows would not be what the page means).
  const result = await runShell(`set -e\n${command}\nprintf '\\n%s' "$PWD"`, {
    cwd: run.cwd,
    env: { npm_config_update_notifier: 'false' },
    timeoutMs: 240_000,
  });
  const where = `${run.page}:${example.command.line}`;
  expect(result.code, `${where} \`${command}\` failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
  run.cwd = result.stdout.split('\n').at(-1)!;
  return `${result.stdout}\n${result.stderr}`;
}

/** The JSON log line of a server's output whose message starts with `listening on`. */
function listeningLine(output: string): Record<string, unknown> | undefined {
  for (const line of output.split('\n')) {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (String(entry.msg).startsWith('listening on')) return entry;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/** Log lines at error level or above (pino: 50 error, 60 fatal). */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}

// ---- the pages --------------------------------------------------------------------------------

const scratch: string[] = [];
const databases: ThrowawayDatabase[] = [];
const servers: BackgroundCommand[] = [];

function newRun(page: string): PageRun {
  const dir = mkdtempSync(join(tmpdir(), 'sy-deploy-pages-'));
  scratch.push(dir);
  const checkout = join(dir, 'checkout');
  const server = join(dir, 'server');
  mkdirSync(checkout);
  mkdirSync(server);
  makeCheckout(checkout);
  return { page, cwd: checkout, checkout, server, built: new Map(), problems: [] };
}

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  for (const database of databases) await database.drop();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('content/operations/deploy-control-plane.md', () => {
  const page = 'content/operations/deploy-control-plane.md';
  const markdown = readFileSync(join(ROOT, page), 'utf8');
  const examples = commandExamples(markdown);

  it('has 9 commands (a new one must be runnable here: raise the count then)', () => {
    expect(examples).toHaveLength(9);
  });

  it('builds, packages, installs and runs the control plane as it says, and checks the container and compose commands against the files', async () => {
    const run = newRun(page);
    const database = await throwawayDatabase('sy_deploy_pages');
    databases.push(database);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const secretFile = join(run.server, 'api-key');
    writeFileSync(secretFile, 'deploy-pages-key\n');
    const localize = (text: string) =>
      text
        .split(PAGE_DATABASE_URL)
        .join(database.url ?? '')
        .split(PAGE_SECRET_FILE)
        .join(secretFile)
        .split('CONTROL_PLANE_HOST=0.0.0.0')
        .join('CONTROL_PLANE_HOST=127.0.0.1')
        .split('CONTROL_PLANE_PORT=8080')
        .join(`CONTROL_PLANE_PORT=${port}`)
        .split('http://0.0.0.0:8080')
        .join(url)
        .split('http://127.0.0.1:8080')
        .join(url);
    let server: BackgroundCommand | undefined;
    const ids = new IdMap();

    for (const example of examples) {
      const command = example.command.code.trim();
      const where = `${page}:${example.command.line}`;
      if (shellWords(command).words[0] === 'docker') {
        run.problems.push(...dockerProblems(command, run.built).map((p) => `${where}: ${p}`));
      } else if (command.includes('node --enable-source-maps apps/control-plane/dist/server.js')) {
        server = startShell(localize(command), { cwd: run.cwd });
        servers.push(server);
        await server.waitFor('listening on', 90_000);
        // The line the page shows: the same fields, the same values where they do not depend on
        // the machine (time, pid, hostname; the database names PGlite's directory without PostgreSQL).
        const shown = JSON.parse(localize(example.shown!.code)) as Record<string, unknown>;
        const logged = listeningLine(server.output());
        expect(Object.keys(logged ?? {}).sort(), where).toEqual(Object.keys(shown).sort());
        for (const key of ['level', 'name', 'url', 'config_source', 'api_key', 'msg']) {
          expect(logged![key], `${where}: ${key}`).toEqual(shown[key]);
        }
        if (POSTGRES) expect(logged!.database).toBe(shown.database);
      } else if (command.startsWith('curl ')) {
        const result = await runShell(localize(command), { cwd: run.cwd, timeoutMs: 30_000 });
        expect(result.code, `${where}: ${result.stderr}`).toBe(0);
        expect(example.shown?.lang, where).toBe('json');
        const differences = shapeDifferences(JSON.parse(result.stdout), JSON.parse(example.shown!.code), {
          measured: new Set(['response_time']),
          ids,
        });
        run.problems.push(...differences.map((p) => `${where}: ${p}`));
      } else {
        await runSetup(run, example, command);
      }
    }
    expect(run.problems).toEqual([]);
    expect(server, 'the page runs the server').toBeDefined();
    // The production install has no development tools.
    expect(existsSync(join(run.server, 'switchyard/node_modules/typescript'))).toBe(false);
    expect(existsSync(join(run.server, 'switchyard/node_modules/tsx'))).toBe(false);
    // The secret reached it: the API refuses a request without the key, and takes the file's key.
    const refused = await fetch(`${url}/api/v1/discovery/capabilities`);
    expect(refused.status).toBe(401);
    await refused.arrayBuffer();
    const allowed = await fetch(`${url}/api/v1/discovery/capabilities`, {
      headers: { 'x-api-key': 'deploy-pages-key' },
    });
    expect(allowed.status).toBe(200);
    await allowed.arrayBuffer();
    // Graceful shutdown, as the page says.
    await server!.stop();
    expect(server!.output()).toContain('SIGTERM: shutting down');
    expect(errorLines(server!.output())).toEqual([]);
  }, 420_000);

  it('describes the image as apps/control-plane/Dockerfile builds it', () => {
    const section = markdown.split('## As a container')[1]!.split('\n## ')[0]!;
    const row = (name: string) => new RegExp(`^\\| ${name} \\| (.+) \\|$`, 'm').exec(section)?.[1] ?? '';
    const parsed = DockerfileParser.parse(readFileSync(join(ROOT, 'apps/control-plane/Dockerfile'), 'utf8'));
    const instructions = parsed.getInstructions();
    const stage = instructions.slice(instructions.findLastIndex((i) => i.getKeyword() === 'FROM') + 1);
    const content = (keyword: string) =>
      stage.filter((i) => i.getKeyword() === keyword).map((i) => i.getRawArgumentsContent() ?? '');
    const env = content('ENV').join(' ');
    const facts = dockerfileFacts('apps/control-plane/Dockerfile');
    // Listens on 0.0.0.0:8080
    const [host, port] = /`([\d.]+):(\d+)`/.exec(row('Listens on'))!.slice(1);
    expect(env).toContain(`CONTROL_PLANE_HOST=${host}`);
    expect(env).toContain(`CONTROL_PLANE_PORT=${port}`);
    expect(facts.exposed).toEqual([Number(port)]);
    // Data in the /data volume
    const data = /`(\/[\w/]+)`/.exec(row('Data'))![1]!;
    expect(facts.volumes).toEqual([data]);
    expect(env).toContain(`SWITCHYARD_DATA_DIR=${data}`);
    // The user, the health check's rhythm, the stop signal and the command
    expect(row('User')).toContain(`\`${content('USER')[0]}\``);
    // The whole instruction: its flags (--interval, --retries) are not part of its arguments.
    const healthcheck = stage.find((i) => i.getKeyword() === 'HEALTHCHECK')!.toString();
    const interval = /--interval=(\d+)s/.exec(healthcheck)![1];
    const retries = /--retries=(\d+)/.exec(healthcheck)![1];
    expect(row('Health')).toContain(`every ${interval} s`);
    expect(row('Health')).toContain(`after ${retries} failures`);
    expect(healthcheck).toContain('/api/v1/health');
    expect(row('Stop')).toContain(`\`STOPSIGNAL ${content('STOPSIGNAL')[0]}\``);
    expect(row('Command')).toBe(`\`${(JSON.parse(content('CMD')[0]!) as string[]).join(' ')}\``);
  });

  it('lists the compose services with the addresses compose.yaml publishes them on', () => {
    const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true });
    const section = markdown.split('## With Docker Compose')[1]!.split('\n## ')[0]!;
    const rows = [...section.matchAll(/^\| `([\w-]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]);
    expect(rows.map(([name]) => name).sort()).toEqual(Object.keys(compose.services).sort());
    for (const [name, address] of rows) {
      const hostPorts = (compose.services[name!].ports ?? []).map((p: string) => String(p).split(':')[0]);
      if (address === 'not published') expect(hostPorts, name).toEqual([]);
      else expect([`\`http://localhost:${hostPorts[0]}\``], name).toEqual([address]);
    }
  });
});

describe('content/operations/deploy-docs-site.md', () => {
  const page = 'content/operations/deploy-docs-site.md';
  const markdown = readFileSync(join(ROOT, page), 'utf8');
  const examples = commandExamples(markdown);

  it('has 9 commands, every check followed by what it prints', () => {
    expect(examples).toHaveLength(9);
    expect(examples.filter((e) => e.command.code.startsWith('curl ') && e.shown?.lang !== 'text')).toEqual(
      [],
    );
  });

  it('builds, packages, installs and runs the docs site as it says, and checks the container commands against the files', async () => {
    const run = newRun(page);
    const database = await throwawayDatabase('sy_deploy_docs');
    databases.push(database);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const localizeServer = (text: string) =>
      text
        .split(PAGE_DATABASE_URL)
        .join(database.url ?? '')
        .split('DOCS_HOST=0.0.0.0')
        .join('DOCS_HOST=127.0.0.1')
        .split('DOCS_PORT=4321')
        .join(`DOCS_PORT=${port}`);
    let server: BackgroundCommand | undefined;

    for (const example of examples) {
      const command = example.command.code.trim();
      const where = `${page}:${example.command.line}`;
      if (shellWords(command).words[0] === 'docker') {
        run.problems.push(...dockerProblems(command, run.built).map((p) => `${where}: ${p}`));
      } else if (command.includes('node --enable-source-maps apps/docs/dist/front-server.js')) {
        server = startShell(localizeServer(command), { cwd: run.cwd });
        servers.push(server);
        await server.waitFor('listening on', 90_000);
        await eventually('the docs server answers', async () => {
          const response = await fetch(`${url}/robots.txt`);
          await response.arrayBuffer();
          return response.status === 200 ? true : undefined;
        });
        // The page: the budget is counted in the database with DATABASE_URL, in memory without.
        expect(listeningLine(server.output())?.rateLimitStore).toBe(POSTGRES ? 'postgres' : 'memory');
      } else if (command.startsWith('curl ')) {
        const result = await runShell(command.split(PAGE_SITE).join(url), {
          cwd: run.cwd,
          timeoutMs: 30_000,
        });
        expect(result.code, `${where}: ${result.stderr}`).toBe(0);
        const printed = result.stdout.replace(/\r/g, '');
        if (printed !== `${example.shown!.code}\n`) {
          run.problems.push(
            `${where}: printed ${JSON.stringify(printed)}, the page shows ${JSON.stringify(example.shown!.code)}`,
          );
        }
      } else {
        const output = await runSetup(run, example, command);
        // SITE_URL went into the build, as the page says it must at build time.
        if (command.includes('npm run build')) {
          const llms = join(run.checkout, 'apps/docs/dist/client/llms.txt');
          expect(existsSync(llms), `${where}: no ${llms} after the build; it printed:\n${output}`).toBe(true);
          expect(readFileSync(llms, 'utf8')).toContain(`${PAGE_SITE}/docs/`);
        }
      }
    }
    expect(run.problems).toEqual([]);
    expect(server, 'the page runs the server').toBeDefined();
    // Nothing the build needs at run time is missing from the production install (the share
    // pages' and the 404 page's renderer loads).
    expect(errorLines(server!.output())).toEqual([]);
    const missing = await fetch(`${url}/docs/no-such-page`, { headers: { accept: 'text/html' } });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('Page not found');
    await server!.stop();
    expect(server!.output()).toContain('"msg":"stopped"');
  }, 420_000);
});
