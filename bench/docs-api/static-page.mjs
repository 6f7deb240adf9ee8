#!/usr/bin/env node
// How close the docs front server comes to the fastest a node:http server can send the same
// answers, for a documentation page and for the search API. The docs server runs as production runs
// it (dist/front-server.js, NODE_ENV=production, JSON logs at info), with its request budget on at
// the default limits and counted where production counts it: in PostgreSQL (a scratch database on
// DATABASE_URL's server, shared by replicas) and, in a second pass, on the embedded database. A
// bare node:http server (bare-server.mjs) holds the exact bytes the docs server sent for each
// request in memory and answers with them. Both run as their own processes in the same run,
// measured in short alternating rounds; a figure is the median of the rounds' ratios, each taken
// between two back-to-back measurements, so the load other work puts on a shared machine moves both
// sides of a ratio alike. The CPU time each process spent per request (from /proc; the docs
// server's PostgreSQL backends counted with it) is reported too: bare ÷ docs is the rate ratio the
// two would reach on a core of their own.
//
// The load comes from many client addresses (DOCS_TRUST_PROXY, X-Forwarded-For), each sending
// `--per-client` requests, fewer than its budget allows: the budget is counted for every request,
// none is refused. Goals: the page at 0.8x the bare server or better, search at 0.3x or better.
//
// Usage: [DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres] node bench/docs-api/static-page.mjs
//        [--store postgres|embedded|both] [--page /docs/api/events-and-ui] [--duration 3]
//        [--connections 10] [--rounds 10] [--per-client 100] [--no-readme]
//        [--cpu-prof <dir>] (a .cpuprofile of the docs server per store, written when it stops)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import knex from 'knex';

const root = path.resolve(import.meta.dirname, '../..');
const docsApp = path.join(root, 'apps/docs');
const readmePath = path.join(import.meta.dirname, 'README.md');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const pagePath = option('--page', '/docs/api/events-and-ui');
const duration = Number(option('--duration', 3));
const connections = Number(option('--connections', 10));
const rounds = Number(option('--rounds', 10));
const perClient = Number(option('--per-client', 100));
const serverUrl = process.env.DATABASE_URL;
const storeOption = option('--store', serverUrl ? 'both' : 'embedded');
const stores = storeOption === 'both' ? ['postgres', 'embedded'] : [storeOption];
const writeReadme = !args.includes('--no-readme');
const cpuProfileDir = option('--cpu-prof', undefined);
if (stores.includes('postgres') && !serverUrl) {
  throw new Error('--store postgres needs DATABASE_URL (a scratch database is made on its server)');
}

const GOALS = { page: 0.8, search: 0.3 };
// What a browser sends for a page, and what an agent's HTTP client sends to the API.
const PAGE_HEADERS = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-encoding': 'gzip, deflate, br',
};
const API_HEADERS = { accept: 'application/json', 'accept-encoding': 'gzip, deflate, br' };

const distDir = path.join(docsApp, 'dist');
if (!existsSync(path.join(distDir, 'client', 'index.html'))) {
  throw new Error('no site build: run `npx turbo run build --filter=@switchyard/docs` first');
}

const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(130);
  });
}

/** Starts a server process and resolves with its URL once it prints `listening on <url>`. */
function startProcess(nodeArgs, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let output = '';
    let ready = false;
    const onData = (chunk) => {
      if (ready) return; // keep draining the pipe, but keep nothing once the server is up
      output += chunk;
      const match = /listening on (https?:\/\/[^\s"]+)/.exec(output);
      if (match) {
        ready = true;
        const store = /"rateLimitStore":"(\w+)"/.exec(output)?.[1];
        output = '';
        const stop = () =>
          child.exitCode !== null || child.signalCode !== null
            ? Promise.resolve()
            : new Promise((done) => {
                child.once('exit', done);
                child.kill('SIGTERM');
              });
        resolve({ url: match[1], pid: child.pid, store, stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      children.delete(child);
      if (!ready) reject(new Error(`${nodeArgs.join(' ')} exited (${code}):\n${output}`));
    });
  });
}

function fetchOnce(url, headers) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** CPU time (user + system, ms) a process has used, from /proc; undefined where there is no /proc. */
function cpuMs(pid) {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

// Client addresses: every `perClient` requests come from the next address, never reused in a run,
// so each address stays within its budget (120 API requests a minute by default) and the budget
// is counted, never refused.
let requestNumber = 0;
function nextClient() {
  const n = Math.floor(requestNumber++ / perClient);
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/** CPU time (ms) of each PostgreSQL backend serving `database`, by pid (the server is on this machine). */
async function backendCpu(admin, database) {
  if (!admin) return new Map();
  const result = await admin.raw('select pid from pg_stat_activity where datname = ?', [database]);
  return new Map(result.rows.map((row) => [row.pid, cpuMs(row.pid) ?? 0]));
}

async function load(server, paths, headers, seconds = duration) {
  let next = 0;
  const backendsBefore = await backendCpu(server.admin, server.database);
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({
    url: `${server.url}${paths[0]}`,
    connections,
    duration: seconds,
    headers,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          path: paths[next++ % paths.length],
          headers: { ...req.headers, 'x-forwarded-for': nextClient() },
        }),
      },
    ],
  });
  const cpuAfter = cpuMs(server.pid);
  const backendsAfter = await backendCpu(server.admin, server.database);
  let databaseMs = 0;
  for (const [pid, ms] of backendsAfter) databaseMs += ms - (backendsBefore.get(pid) ?? 0);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${bad} failed requests against ${server.url}${paths[0]}`);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore + databaseMs,
    databaseMs,
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
/** Microseconds of CPU per request over all rounds. */
const perRequest = (runs, key) =>
  runs.some((run) => run[key] === undefined)
    ? undefined
    : (runs.reduce((sum, run) => sum + run[key], 0) * 1000) /
      runs.reduce((sum, run) => sum + run.requests, 0);

/** Queries a reader or agent would send: page titles, section headings and identifiers from the index. */
function queryMix() {
  const index = JSON.parse(readFileSync(path.join(distDir, 'client/search-index.json'), 'utf8'));
  const queries = [];
  for (
    let i = 0;
    i < index.pages.length && queries.length < 20;
    i += Math.max(1, Math.floor(index.pages.length / 20))
  )
    queries.push(index.pages[i].title);
  for (
    let i = 0;
    i < index.passages.length && queries.length < 40;
    i += Math.max(1, Math.floor(index.passages.length / 20))
  )
    queries.push(index.passages[i].section);
  queries.push('X-API-Key', 'workflow_id', 'how do I authenticate', 'rate limits', 'webhook signature');
  return queries.map((q) => `/api/v1/search?q=${encodeURIComponent(q)}`);
}

/** One store's run: the docs server, its bare reference, then alternating rounds of both loads. */
async function runStore(store, scratch) {
  let docs;
  let bare;
  let admin;
  let database;
  const dataDir = mkdtempSync(path.join(scratch, `${store}-`));
  try {
    const env = { DOCS_DIST_DIR: distDir, DOCS_PORT: '0', DOCS_TRUST_PROXY: 'true', NODE_ENV: 'production' };
    if (store === 'postgres') {
      admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
      database = `sy_bench_bare_${Date.now().toString(36)}`;
      await admin.raw(`create database ${database}`);
      const url = new URL(serverUrl);
      url.pathname = `/${database}`;
      env.DATABASE_URL = url.toString();
    } else {
      env.SWITCHYARD_DATA_DIR = dataDir;
    }
    const profile = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(cpuProfileDir)}`] : [];
    docs = await startProcess(
      [...profile, '--enable-source-maps', path.join(docsApp, 'dist/front-server.js')],
      env,
    );
    docs.admin = admin;
    docs.database = database;
    if (docs.store !== (store === 'postgres' ? 'postgres' : 'memory'))
      throw new Error(`the docs server counts its budget in ${docs.store}, expected ${store}`);

    // The bare server's answers: the exact bytes the docs server sent for each path.
    const loads = {
      page: { paths: [pagePath], headers: PAGE_HEADERS },
      search: { paths: queryMix(), headers: API_HEADERS },
    };
    const answers = [];
    for (const [name, { paths, headers }] of Object.entries(loads)) {
      for (const [i, urlPath] of paths.entries()) {
        const sample = await fetchOnce(`${docs.url}${urlPath}`, {
          ...headers,
          'x-forwarded-for': '192.0.2.1',
        });
        if (sample.status !== 200) throw new Error(`${urlPath} answered ${sample.status}`);
        const bodyFile = path.join(dataDir, `${name}-${i}`);
        writeFileSync(bodyFile, sample.body);
        answers.push({
          name,
          path: urlPath,
          bodyFile,
          bytes: sample.body.length,
          contentType: sample.headers['content-type'],
          contentEncoding: sample.headers['content-encoding'] ?? 'identity',
        });
      }
    }
    const answersFile = path.join(dataDir, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(answers));
    bare = await startProcess([path.join(import.meta.dirname, 'bare-server.mjs'), answersFile], {});
    for (const answer of answers) {
      const reference = await fetchOnce(`${bare.url}${answer.path}`, {});
      if (!reference.body.equals(readFileSync(answer.bodyFile)))
        throw new Error('the bare server does not send the same bytes');
    }

    const results = {};
    for (const [name, { paths, headers }] of Object.entries(loads)) {
      // Warm-up: JIT, first-load caches, pools and connection set-up are not what is measured.
      await load(docs, paths, headers, 2);
      await load(bare, paths, headers, 2);
      const docsRuns = [];
      const bareRuns = [];
      for (let round = 0; round < rounds; round++) {
        // Alternate which server goes first, so a load spike on the shared machine is split evenly.
        const order = round % 2 === 0 ? [docs, bare] : [bare, docs];
        for (const server of order)
          (server === docs ? docsRuns : bareRuns).push(await load(server, paths, headers));
        console.log(
          `${store}, ${name}, round ${round + 1}: docs ${Math.round(docsRuns.at(-1).rps)} req/s, bare ${Math.round(bareRuns.at(-1).rps)} req/s, ratio ${(docsRuns.at(-1).rps / bareRuns.at(-1).rps).toFixed(2)}`,
        );
      }
      const sent = answers.filter((answer) => answer.name === name);
      results[name] = {
        docsRuns,
        bareRuns,
        ratios: docsRuns.map((run, i) => run.rps / bareRuns[i].rps),
        sent,
      };
    }
    return results;
  } finally {
    await Promise.all([docs?.stop(), bare?.stop()]);
    if (admin) {
      await admin.raw(`drop database if exists ${database} with (force)`).catch(() => {});
      await admin.destroy();
    }
  }
}

const scratch = mkdtempSync(path.join(tmpdir(), 'switchyard-bare-bench-'));
const loadBefore = loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');
const byStore = {};
try {
  for (const store of stores) byStore[store] = await runStore(store, scratch);
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

const loadAfter = loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');
const STORE_LABELS = {
  postgres: 'PostgreSQL (shared budget)',
  embedded: 'embedded PGlite (budget in the process)',
};
const cell = (us) => (us === undefined ? 'n/a' : us.toFixed(0));
const lines = [
  `Docs server against a bare node:http server (Node ${process.version}, ${cpus().length} cores, ${cpus()[0]?.model ?? 'cpu'}, load average ${loadBefore} at the start and ${loadAfter} at the end; autocannon ${connections} connections, ${rounds} alternating rounds × ${duration} s per load; request budget on at its default limits, a new client address every ${perClient} requests; req/s and latencies are medians over the rounds, × bare the median of the rounds' ratios)`,
  '',
];
const pageAnswer = byStore[stores[0]].page.sent[0];
const searchAnswers = byStore[stores[0]].search.sent;
lines.push(
  `Page: \`${pagePath}\`, sent as ${pageAnswer.bytes} bytes (\`Content-Encoding: ${pageAnswer.contentEncoding}\`) to a browser's \`Accept\` and \`Accept-Encoding\`. Search: ${searchAnswers.length} queries (page titles, headings, identifiers) in turn, answers of ${Math.min(...searchAnswers.map((a) => a.bytes))}–${Math.max(...searchAnswers.map((a) => a.bytes))} bytes as sent to \`Accept-Encoding: gzip, deflate, br\`. CPU per request: the docs process's, plus its PostgreSQL backends' (in brackets) on PostgreSQL.`,
  '',
  "| database | load | docs req/s | bare req/s | docs p50 / p99 (ms) | × bare (req/s) | rounds' range | docs CPU per request (µs) | bare CPU per request (µs) | × bare (CPU) | goal |",
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
);
const verdicts = [];
for (const [store, results] of Object.entries(byStore)) {
  for (const [name, { docsRuns, bareRuns, ratios }] of Object.entries(results)) {
    const ratio = median(ratios);
    const docsCpu = perRequest(docsRuns, 'cpuMs');
    const databaseCpu = perRequest(docsRuns, 'databaseMs');
    const bareCpu = perRequest(bareRuns, 'cpuMs');
    const cpuRatio = docsCpu && bareCpu ? bareCpu / docsCpu : undefined;
    const pass = ratio >= GOALS[name];
    verdicts.push(
      `${pass ? 'PASS' : 'MISS'} ${store} ${name}: ${ratio.toFixed(2)}x bare (goal ≥ ${GOALS[name]}x; rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}; by CPU ${cpuRatio === undefined ? 'n/a' : cpuRatio.toFixed(2)}x)`,
    );
    lines.push(
      `| ${STORE_LABELS[store]} | ${name} | ${Math.round(median(docsRuns.map((r) => r.rps)))} | ${Math.round(median(bareRuns.map((r) => r.rps)))} | ${median(docsRuns.map((r) => r.p50))} / ${median(docsRuns.map((r) => r.p99))} | ${ratio.toFixed(2)} | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} | ${cell(docsCpu)}${store === 'postgres' ? ` (${cell(databaseCpu)})` : ''} | ${cell(bareCpu)} | ${cpuRatio === undefined ? 'n/a' : cpuRatio.toFixed(2)} | ${pass ? 'PASS' : 'MISS'} (≥ ${GOALS[name]}) |`,
    );
  }
}
const output = lines.join('\n');
console.log(`\n${output}\n\n${verdicts.join('\n')}`);

if (writeReadme) {
  const readme = readFileSync(readmePath, 'utf8');
  const start = '<!-- static:start -->';
  const end = '<!-- static:end -->';
  const block = `${start}\nLatest run (${new Date().toISOString().slice(0, 10)}):\n\n${output}\n${end}`;
  const next = readme.includes(start)
    ? readme.replace(new RegExp(`${start}[\\s\\S]*${end}`), block)
    : `${readme.trimEnd()}\n\n${block}\n`;
  writeFileSync(readmePath, next);
}
