#!/usr/bin/env node
// What the embedded database's WebAssembly tiering budget (packages/shared/src/db/open-database.ts)
// saves, against V8's own default in the same run. Run from the repository root, after
// `npm run build -w @switchyard/control-plane`:
//   node bench/control-plane/embedded-start.mjs
// Settings: BENCH_ROUNDS (5), BENCH_BATCHES (8: the steady measurement's batches).
//
// Three measurements, each in fresh processes, alternating the two sides round by round (the order
// flips each round) so the machine's load drifts over both alike:
//   open    openDatabase() on a new in-memory PGlite (PostgreSQL's initdb and start), CPU and time;
//   start   the built control plane on a copy of a migrated data directory, until
//           GET /api/v1/health answers 200: CPU and time;
//   steady  after opening, 8 batches of 3,000 inserts and 200 grouped reads; the CPU of batches 2
//           on (the queries the optimizing compiler is for).
// The reference side passes V8's default `--wasm-tiering-budget` to node, which the code leaves as
// given; the other side runs as users run it.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SERVER = fileURLToPath(new URL('../../apps/control-plane/dist/server.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./embedded-start-child.mjs', import.meta.url));

if (!existsSync(SERVER)) {
  console.error(`No build at ${SERVER}: run \`npm run build -w @switchyard/control-plane\` first.`);
  process.exit(1);
}

const v8Default = /default: --wasm-tiering-budget=(\d+)/.exec(
  execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }),
)?.[1];
if (!v8Default) {
  console.error('This node has no --wasm-tiering-budget option; nothing to compare.');
  process.exit(1);
}
const SIDES = { 'V8 default': [`--wasm-tiering-budget=${v8Default}`], switchyard: [] };

/** CPU ms (user + system) a live process has used so far, from Linux /proc (ticks of 1/100 s). */
function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the built server in `dir`; resolves with its process once it answers its health check. */
async function startServer(flags, dir) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...flags, SERVER], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      CONTROL_PLANE_PORT: String(port),
      CONTROL_PLANE_HOST: '127.0.0.1',
      SWITCHYARD_DATA_DIR: dir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exit;
  child.on('exit', (code, signal) => {
    exit = signal ?? code;
  });
  for (;;) {
    if (exit !== undefined) throw new Error(`the control plane exited (${exit}) before it was healthy`);
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (answer.status === 200) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { child, ms: performance.now() - started, cpuMs: processCpuMs(child.pid) };
}

async function stop(child, signal) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** A migrated data directory: the server started once on an empty one and stopped gracefully. */
async function migratedDataDir(work) {
  const dir = join(work, 'template');
  mkdirSync(dir);
  const { child } = await startServer([], dir);
  await stop(child, 'SIGTERM');
  return join(dir, 'control-plane');
}

async function measureStart(flags, template, work) {
  const dir = mkdtempSync(join(work, 'run-'));
  cpSync(template, join(dir, 'control-plane'), { recursive: true });
  const { child, ms, cpuMs } = await startServer(flags, dir);
  await stop(child, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  return { ms, cpuMs };
}

/** Runs embedded-start-child.mjs (through tsx, for the workspace's TypeScript) and parses its line. */
function measureInChild(flags, mode) {
  const output = execFileSync(process.execPath, [...flags, '--import', 'tsx', CHILD, mode], {
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').at(-1));
}

const work = mkdtempSync(join(tmpdir(), 'switchyard-embedded-start-'));
try {
  const template = await migratedDataDir(work);
  const results = Object.fromEntries(Object.keys(SIDES).map((side) => [side, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? Object.keys(SIDES).reverse() : Object.keys(SIDES);
    for (const side of order) {
      const flags = SIDES[side];
      const open = measureInChild(flags, 'open');
      const steady = measureInChild(flags, 'steady');
      const start = await measureStart(flags, template, work);
      results[side].push({ open, steady, start });
    }
    const line = Object.entries(results)
      .map(([side, runs]) => {
        const { open, steady, start } = runs.at(-1);
        return `${side}: open ${open.cpuMs} ms CPU, start ${start.cpuMs} ms CPU, steady ${steady.cpuMs} ms CPU`;
      })
      .join(' | ');
    console.log(`round ${round + 1}: ${line}`);
  }

  const figure = (side, pick) => median(results[side].map(pick));
  const rows = [
    ['open: CPU ms', (run) => run.open.cpuMs],
    ['open: ms', (run) => run.open.ms],
    ['start to healthy: CPU ms', (run) => run.start.cpuMs],
    ['start to healthy: ms', (run) => run.start.ms],
    ['steady queries: CPU ms', (run) => run.steady.cpuMs],
  ];
  console.log(`\nNode ${process.version}, V8 ${process.versions.v8}, ${ROUNDS} rounds, medians:`);
  console.log('| measure | V8 default | switchyard | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, pick] of rows) {
    const reference = figure('V8 default', pick);
    const ours = figure('switchyard', pick);
    console.log(
      `| ${name} | ${reference.toFixed(0)} | ${ours.toFixed(0)} | ${(ours / reference).toFixed(2)} |`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
