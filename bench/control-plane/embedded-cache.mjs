#!/usr/bin/env node
// What the embedded database's smaller page cache (EMBEDDED_SETTINGS in
// packages/shared/src/db/open-database.ts) costs and saves, against PostgreSQL's default of 128 MB
// in the same run. Run from the repository root:
//   node --import tsx bench/control-plane/embedded-cache.mjs
// Settings: BENCH_ROUNDS (5), BENCH_ROWS (200000: about 70 MB of table, four times the smaller
// cache, so the reads below cannot all be served from it).
//
// Each measurement runs in a fresh process (this file with a mode), the two sides alternating round
// by round (the order flips each round) so the machine's load drifts over both alike:
//   open    PGlite on a copy of a data directory the way openDatabase() opens it, with the side's
//           cache settings: CPU, time and resident memory once it answers `select 1`;
//   reads   on a copy holding BENCH_ROWS rows: 2,000 reads of a random row by its key and four scans
//           of the whole table, after a first scan; time and CPU.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { EMBEDDED_SETTINGS } from '../../packages/shared/src/db/open-database.ts';
import { median } from './stats.mjs';

const SIDES = {
  'PostgreSQL default (128 MB)': ['-c', 'shared_buffers=128MB', '-c', 'wal_buffers=4MB'],
  switchyard: EMBEDDED_SETTINGS,
};
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const SELF = fileURLToPath(import.meta.url);

/** Opens PGlite on `dir` as openDatabase() does, with `settings` in place of its cache settings. */
function open(dir, settings) {
  return PGlite.create({
    dataDir: dir,
    extensions: { vector },
    startParams: [...PGlite.defaultStartParams, ...settings],
  });
}

const cpuMs = (since) => {
  const used = process.cpuUsage(since);
  return Math.round((used.user + used.system) / 1000);
};
const residentMb = () =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024);

/** One measurement in this process; prints one JSON line. */
async function child(mode, side, dir) {
  const settings = SIDES[side];
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  const db = await open(dir, settings);
  await db.query('select 1');
  if (mode === 'open') {
    const figures = {
      ms: Math.round(performance.now() - started),
      cpuMs: cpuMs(cpuAtStart),
      mb: residentMb(),
    };
    console.log(JSON.stringify(figures));
  } else if (mode === 'fill') {
    await db.exec(`create table bench_rows (id int primary key, bucket int, label text);
      insert into bench_rows select i, i % 97, repeat(md5(i::text), 8) from generate_series(1, ${ROWS}) i;
      checkpoint;`);
  } else if (mode === 'reads') {
    await db.query('select count(*) from bench_rows');
    const cpuBefore = process.cpuUsage();
    const before = performance.now();
    for (let i = 0; i < 2000; i++) {
      await db.query('select label from bench_rows where id = $1', [1 + Math.floor(Math.random() * ROWS)]);
    }
    for (let i = 0; i < 4; i++) await db.query('select bucket, count(*) from bench_rows group by bucket');
    console.log(JSON.stringify({ ms: Math.round(performance.now() - before), cpuMs: cpuMs(cpuBefore) }));
  } else {
    throw new Error(`unknown mode ${mode}: open, fill or reads`);
  }
  await db.close();
}

function measure(mode, side, dir) {
  const output = execFileSync(process.execPath, ['--import', 'tsx', SELF, mode, side, dir], {
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').at(-1));
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'switchyard-embedded-cache-'));
  try {
    const empty = join(work, 'empty');
    await (await open(empty, EMBEDDED_SETTINGS)).close();
    const filled = join(work, 'filled');
    cpSync(empty, filled, { recursive: true });
    execFileSync(process.execPath, ['--import', 'tsx', SELF, 'fill', 'switchyard', filled]);
    const results = Object.fromEntries(Object.keys(SIDES).map((side) => [side, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? Object.keys(SIDES).reverse() : Object.keys(SIDES);
      for (const side of order) {
        const copy = (from) => {
          const dir = mkdtempSync(join(work, 'run-'));
          cpSync(from, dir, { recursive: true });
          return dir;
        };
        const openDir = copy(empty);
        const opened = measure('open', side, openDir);
        const readDir = copy(filled);
        const reads = measure('reads', side, readDir);
        rmSync(openDir, { recursive: true, force: true });
        rmSync(readDir, { recursive: true, force: true });
        results[side].push({ opened, reads });
      }
      const line = Object.entries(results)
        .map(([side, runs]) => {
          const { opened, reads } = runs.at(-1);
          return `${side}: open ${opened.cpuMs} ms CPU, ${opened.mb} MB; reads ${reads.ms} ms`;
        })
        .join(' | ');
      console.log(`round ${round + 1}: ${line}`);
    }
    const [reference, ours] = Object.keys(SIDES);
    const rows = [
      ['open: CPU ms', (run) => run.opened.cpuMs],
      ['open: ms', (run) => run.opened.ms],
      ['open: resident MB', (run) => run.opened.mb],
      [`reads (${ROWS.toLocaleString('en')} rows): ms`, (run) => run.reads.ms],
      [`reads (${ROWS.toLocaleString('en')} rows): CPU ms`, (run) => run.reads.cpuMs],
    ];
    console.log(`\nNode ${process.version}, ${ROUNDS} rounds, medians:`);
    console.log(`| measure | ${reference} | ${ours} | ratio |`);
    console.log('| --- | --- | --- | --- |');
    for (const [name, pick] of rows) {
      const theirs = median(results[reference].map(pick));
      const mine = median(results[ours].map(pick));
      console.log(`| ${name} | ${theirs.toFixed(0)} | ${mine.toFixed(0)} | ${(mine / theirs).toFixed(2)} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2]) await child(process.argv[2], process.argv[3], process.argv[4]);
else await main();
