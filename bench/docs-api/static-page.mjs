#!/usr/bin/env node
// How close the docs front server comes to the fastest a node:http server can send one page: the
// docs server answers a browser's request for a documentation page (about 22 KB of HTML, sent
// compressed), and a bare node:http server (bare-server.mjs) answers the same request with the
// exact bytes the docs server sent, held in memory. Both run as their own processes in the same
// run, measured in many short alternating rounds; the figure is the median of the rounds' ratios,
// each taken between two back-to-back measurements, so the load other work puts on a shared
// machine moves both sides of a ratio alike. On a busy machine the rates still swing with what
// else runs, so the CPU time each server process spends per request (from /proc) is reported as
// well: bare ÷ docs is the rate ratio the two would reach on a core of their own. Goal: the docs
// server at 0.8x the bare server or better.
//
// Usage: node bench/docs-api/static-page.mjs [--page /docs/api/events-and-ui] [--duration 5]
//        [--connections 10] [--rounds 10] [--no-readme]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

const root = path.resolve(import.meta.dirname, '../..');
const docsApp = path.join(root, 'apps/docs');
const readmePath = path.join(import.meta.dirname, 'README.md');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const pagePath = option('--page', '/docs/api/events-and-ui');
const duration = Number(option('--duration', 3));
const connections = Number(option('--connections', 10));
const rounds = Number(option('--rounds', 10));
const writeReadme = !args.includes('--no-readme');

// What a browser sends for a page.
const BROWSER_HEADERS = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-encoding': 'gzip, deflate, br',
};

const distDir = path.join(docsApp, 'dist');
if (!existsSync(path.join(distDir, 'client', 'index.html'))) {
  throw new Error('no site build: run `npm run build -w @switchyard/docs` first');
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
      env: { ...process.env, ...env },
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
        output = '';
        resolve({ url: match[1], pid: child.pid, stop: () => child.kill('SIGTERM') });
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

function fetchOnce(url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: BROWSER_HEADERS, agent: false }, (res) => {
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

async function load(server, url) {
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({ url, connections, duration, headers: BROWSER_HEADERS });
  const cpuAfter = cpuMs(server.pid);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${bad} failed requests against ${url}`);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const scratch = mkdtempSync(path.join(tmpdir(), 'switchyard-static-bench-'));
let docs;
let bare;
try {
  docs = await startProcess(['--enable-source-maps', path.join(docsApp, 'dist/front-server.js')], {
    DOCS_DIST_DIR: distDir,
    DOCS_PORT: '0',
    DOCS_RATE_LIMIT: '100000000',
    DOCS_PAGE_RATE_LIMIT: '100000000',
    SHARES_ENABLED: 'false',
    // What `npm start` runs in production: JSON logs at the default level.
    NODE_ENV: 'production',
  });
  const sample = await fetchOnce(`${docs.url}${pagePath}`);
  if (sample.status !== 200) throw new Error(`${pagePath} answered ${sample.status}`);
  const encoding = sample.headers['content-encoding'] ?? 'identity';
  const bodyFile = path.join(scratch, 'body');
  writeFileSync(bodyFile, sample.body);
  bare = await startProcess(
    [path.join(import.meta.dirname, 'bare-server.mjs'), bodyFile, sample.headers['content-type'], encoding],
    {},
  );
  const reference = await fetchOnce(bare.url);
  if (!reference.body.equals(sample.body)) throw new Error('the bare server does not send the same bytes');

  const page = readFileSync(path.join(distDir, 'client', pagePath, 'index.html'));
  console.log(
    `${pagePath}: ${page.length} bytes of HTML, sent as ${sample.body.length} bytes (${encoding}); ` +
      `${rounds} rounds of ${duration} s, ${connections} connections`,
  );
  // Warm-up: JIT, first-load caches and connection set-up are not what is measured.
  await autocannon({ url: `${docs.url}${pagePath}`, connections, duration: 2, headers: BROWSER_HEADERS });
  await autocannon({ url: bare.url, connections, duration: 2, headers: BROWSER_HEADERS });

  const docsRuns = [];
  const bareRuns = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which server goes first, so a load spike on the shared machine is split evenly.
    if (round % 2 === 0) {
      docsRuns.push(await load(docs, `${docs.url}${pagePath}`));
      bareRuns.push(await load(bare, bare.url));
    } else {
      bareRuns.push(await load(bare, bare.url));
      docsRuns.push(await load(docs, `${docs.url}${pagePath}`));
    }
    const ratio = docsRuns.at(-1).rps / bareRuns.at(-1).rps;
    console.log(
      `round ${round + 1}: docs ${Math.round(docsRuns.at(-1).rps)} req/s, bare ${Math.round(bareRuns.at(-1).rps)} req/s, ratio ${ratio.toFixed(2)}`,
    );
  }

  const docsRps = median(docsRuns.map((r) => r.rps));
  const bareRps = median(bareRuns.map((r) => r.rps));
  const ratios = docsRuns.map((run, i) => run.rps / bareRuns[i].rps);
  const ratio = median(ratios);
  // CPU per request over all rounds: microseconds of the server process's own time.
  const cpuPerRequest = (runs) =>
    runs.some((run) => run.cpuMs === undefined)
      ? undefined
      : (runs.reduce((sum, run) => sum + run.cpuMs, 0) * 1000) /
        runs.reduce((sum, run) => sum + run.requests, 0);
  const docsCpu = cpuPerRequest(docsRuns);
  const bareCpu = cpuPerRequest(bareRuns);
  const cpuRatio = docsCpu && bareCpu ? bareCpu / docsCpu : undefined;
  const cpuCell = (us) => (us === undefined ? 'n/a' : us.toFixed(0));
  const loadAverage = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const lines = [
    `Static page (Node ${process.version}, ${cpus().length} cores, ${cpus()[0]?.model ?? 'cpu'}, load average ${loadAverage} at the end; autocannon ${connections} connections, ${rounds} alternating rounds × ${duration} s; req/s and latencies are medians over the rounds, × bare the median of the rounds' ratios, which ranged ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    '',
    `\`${pagePath}\`: ${page.length} bytes of HTML, sent as ${sample.body.length} bytes with \`Content-Encoding: ${encoding}\` to a browser's \`Accept\` and \`Accept-Encoding\`.`,
    '',
    '| server | req/s | p50 (ms) | p99 (ms) | × bare (req/s) | CPU per request (µs) | × bare (CPU) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    `| docs front server | ${Math.round(docsRps)} | ${median(docsRuns.map((r) => r.p50))} | ${median(docsRuns.map((r) => r.p99))} | ${ratio.toFixed(2)} | ${cpuCell(docsCpu)} | ${cpuRatio === undefined ? 'n/a' : cpuRatio.toFixed(2)} |`,
    `| bare node:http, same bytes from memory | ${Math.round(bareRps)} | ${median(bareRuns.map((r) => r.p50))} | ${median(bareRuns.map((r) => r.p99))} | 1.00 | ${cpuCell(bareCpu)} | 1.00 |`,
  ];
  const output = lines.join('\n');
  console.log(`\n${output}\n`);
  const verdict = (x) => `${x.toFixed(2)}x ${x >= 0.8 ? '(met)' : '(NOT met)'}`;
  console.log(
    `goal: docs server at least 0.80x the bare server: ${verdict(ratio)} by rate` +
      (cpuRatio === undefined ? '' : `, ${verdict(cpuRatio)} by CPU per request`),
  );

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
} finally {
  docs?.stop();
  bare?.stop();
  rmSync(scratch, { recursive: true, force: true });
}
