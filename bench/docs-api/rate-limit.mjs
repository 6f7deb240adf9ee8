#!/usr/bin/env node
// What sharing the request budget across replicas costs: two docs front servers run as their own
// processes in the same run, built as production runs them (dist/front-server.js), identical but
// for the database: one on embedded PGlite, which counts the budget in memory, one on a scratch
// PostgreSQL database, which counts it in docs_rate_windows with one upsert per batch of the
// requests that arrive during a round trip (the shared store,
// apps/docs/server/http/shared-rate-limiter.ts). Both answer GET /api/v1/topics, a
// cheap answer, so the limiter's part of each request shows. Two loads: every request from one
// client address (one row, which each batch of the 10 connections' requests counts in one upsert)
// and requests from 1,000 addresses (DOCS_TRUST_PROXY with X-Forwarded-For). Measured in short
// alternating rounds; the figure is the median of the rounds' ratios shared ÷ memory, so load that
// other work puts on this shared machine moves both sides of a ratio alike. CPU per request is read
// from /proc, for the docs process and, apart, for the PostgreSQL backends serving the scratch
// database (the server must run on this machine); both share the same two cores, so both are in
// the rates.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/docs-api/rate-limit.mjs
//        [--duration 3] [--connections 10] [--rounds 6] [--no-readme]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import knex from 'knex';

const root = path.resolve(import.meta.dirname, '../..');
const docsApp = path.join(root, 'apps/docs');
const readmePath = path.join(import.meta.dirname, 'README.md');
const frontServer = path.join(docsApp, 'dist/front-server.js');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const duration = Number(option('--duration', 3));
const connections = Number(option('--connections', 10));
const rounds = Number(option('--rounds', 6));
const writeReadme = !args.includes('--no-readme');
const serverUrl = process.env.DATABASE_URL;

if (!serverUrl)
  throw new Error('DATABASE_URL must name a PostgreSQL server (a scratch database is made on it)');
if (!existsSync(frontServer) || !existsSync(path.join(docsApp, 'dist/client/index.html'))) {
  throw new Error('no docs build: run `npm run build -w @switchyard/docs` first');
}

const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(130);
  });
}

/**
 * SIGTERM, then SIGKILL if it is still running 10 s later; resolves once the process has exited, so
 * its database connections are closed and its data directory is no longer written to.
 */
function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts the docs server and resolves once it logs `listening on <url>` (with its rate limit store). */
function startDocs(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--enable-source-maps', frontServer], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let output = '';
    let ready = false;
    const onData = (chunk) => {
      if (ready) return;
      output += chunk;
      const match = /"rateLimitStore":"(\w+)".*listening on (https?:\/\/[^\s"]+)/.exec(output);
      if (match) {
        ready = true;
        output = '';
        resolve({ store: match[1], url: match[2], pid: child.pid, stop: () => stopChild(child) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      children.delete(child);
      if (!ready) reject(new Error(`docs server exited (${code}):\n${output}`));
    });
  });
}

/** CPU time (user + system, ms) a process has used, from /proc; undefined where there is none. */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

const LOADS = {
  'one client address': () => ({}),
  // A fresh address per request, out of 1,000, as the nearest proxy would append it.
  '1,000 client addresses': () => ({
    'x-forwarded-for': `198.51.${Math.floor(Math.random() * 4)}.${Math.floor(Math.random() * 250)}`,
  }),
};

/** CPU time (ms) of each PostgreSQL backend serving `database`, by pid (the server is on this machine). */
async function backendCpu(database) {
  if (!database) return new Map();
  const result = await admin.raw('select pid from pg_stat_activity where datname = ?', [database]);
  return new Map(result.rows.map((row) => [row.pid, cpuMs(row.pid) ?? 0]));
}

async function load(server, headersOf, seconds = duration) {
  const backendsBefore = await backendCpu(server.database);
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({
    url: `${server.url}/api/v1/topics`,
    connections,
    duration: seconds,
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...headersOf() } }) }],
  });
  const cpuAfter = cpuMs(server.pid);
  const backendsAfter = await backendCpu(server.database);
  let databaseMs = 0;
  for (const [pid, ms] of backendsAfter) databaseMs += ms - (backendsBefore.get(pid) ?? 0);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${bad} failed requests against ${server.url} (${server.store})`);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
    databaseMs,
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const databasePerRequest = (runs) =>
  (runs.reduce((sum, run) => sum + run.databaseMs, 0) * 1000) /
  runs.reduce((sum, run) => sum + run.requests, 0);
const cpuPerRequest = (runs) =>
  runs.some((run) => run.cpuMs === undefined)
    ? undefined
    : (runs.reduce((sum, run) => sum + run.cpuMs, 0) * 1000) /
      runs.reduce((sum, run) => sum + run.requests, 0);

const scratchName = `sy_bench_rate_${Date.now().toString(36)}`;
const admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-rate-bench-'));
let memory;
let shared;
let rowsAfter;
try {
  await admin.raw(`create database ${scratchName}`);
  const scratchUrl = new URL(serverUrl);
  scratchUrl.pathname = `/${scratchName}`;
  const common = {
    DOCS_PORT: '0',
    DOCS_RATE_LIMIT: '100000000',
    DOCS_TRUST_PROXY: 'true',
    NODE_ENV: 'production',
  };
  memory = await startDocs({ ...common, SWITCHYARD_DATA_DIR: dataDir });
  shared = {
    ...(await startDocs({ ...common, DATABASE_URL: scratchUrl.toString() })),
    database: scratchName,
  };
  if (memory.store !== 'memory' || shared.store !== 'postgres') {
    throw new Error(`expected memory and postgres stores, got ${memory.store} and ${shared.store}`);
  }

  const rows = [];
  for (const [name, headersOf] of Object.entries(LOADS)) {
    // Warm-up: JIT, pools and first rows are not what is measured.
    await load(memory, headersOf, 2);
    await load(shared, headersOf, 2);
    const memoryRuns = [];
    const sharedRuns = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [memory, shared] : [shared, memory];
      for (const server of order)
        (server === memory ? memoryRuns : sharedRuns).push(await load(server, headersOf));
      const ratio = sharedRuns.at(-1).rps / memoryRuns.at(-1).rps;
      console.log(
        `${name}, round ${round + 1}: memory ${Math.round(memoryRuns.at(-1).rps)} req/s, shared ${Math.round(sharedRuns.at(-1).rps)} req/s, ratio ${ratio.toFixed(2)}`,
      );
    }
    const ratios = sharedRuns.map((run, i) => run.rps / memoryRuns[i].rps);
    rows.push({ name, memoryRuns, sharedRuns, ratios });
  }
  const db = knex({ client: 'pg', connection: scratchUrl.toString(), pool: { min: 0, max: 1 } });
  rowsAfter = Number((await db.raw('select count(*)::int as n from docs_rate_windows')).rows[0].n);
  await db.destroy();

  const cell = (us) => (us === undefined ? 'n/a' : us.toFixed(0));
  const loadAverage = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const lines = [
    `Request budget store (Node ${process.version}, ${cpus().length} cores, ${cpus()[0]?.model ?? 'cpu'}, load average ${loadAverage} at the end; autocannon ${connections} connections on \`GET /api/v1/topics\`, ${rounds} alternating rounds × ${duration} s; req/s and latencies are medians over the rounds, × memory the median of the rounds' ratios; PostgreSQL on the same machine)`,
    '',
    '| load | budget counted | req/s | p50 (ms) | p99 (ms) | × memory (req/s) | ratio range | docs CPU per request (µs) | PostgreSQL CPU per request (µs) | × memory (CPU) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { name, memoryRuns, sharedRuns, ratios } of rows) {
    // The CPU ratio: the rate the two would reach when CPU is what limits them, the database's
    // work counted with the shared side. It moves far less with the machine's load than the rates.
    const memoryCpu = cpuPerRequest(memoryRuns);
    const sharedCpu = cpuPerRequest(sharedRuns);
    const cpuRatio =
      memoryCpu === undefined || sharedCpu === undefined
        ? 'n/a'
        : (memoryCpu / (sharedCpu + databasePerRequest(sharedRuns))).toFixed(2);
    const row = (label, runs, ratio, range, database, cpu) =>
      `| ${name} | ${label} | ${Math.round(median(runs.map((r) => r.rps)))} | ${median(runs.map((r) => r.p50))} | ${median(runs.map((r) => r.p99))} | ${ratio} | ${range} | ${cell(cpuPerRequest(runs))} | ${database} | ${cpu} |`;
    lines.push(row('in memory (embedded database)', memoryRuns, '1.00', '', 'none', '1.00'));
    lines.push(
      row(
        'shared (PostgreSQL upsert)',
        sharedRuns,
        median(ratios).toFixed(2),
        `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
        databasePerRequest(sharedRuns).toFixed(0),
        cpuRatio,
      ),
    );
  }
  lines.push(
    '',
    `Rows in \`docs_rate_windows\` after the run: ${rowsAfter} (one per address seen in the window).`,
  );
  const output = lines.join('\n');
  console.log(`\n${output}\n`);

  if (writeReadme) {
    const readme = readFileSync(readmePath, 'utf8');
    const start = '<!-- ratelimit:start -->';
    const end = '<!-- ratelimit:end -->';
    const block = `${start}\nLatest run (${new Date().toISOString().slice(0, 10)}):\n\n${output}\n${end}`;
    const next = readme.includes(start)
      ? readme.replace(new RegExp(`${start}[\\s\\S]*${end}`), block)
      : `${readme.trimEnd()}\n\n${block}\n`;
    writeFileSync(readmePath, next);
  }
} finally {
  // Both servers have exited before their database and data directory are removed: a fixed pause
  // left PGlite writing into a directory being deleted on a busy machine.
  await Promise.all([memory?.stop(), shared?.stop()]);
  await admin.raw(`drop database if exists ${scratchName} with (force)`).catch(() => {});
  await admin.destroy();
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}
