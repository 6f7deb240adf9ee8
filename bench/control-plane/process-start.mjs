#!/usr/bin/env node
// What bundling the third-party packages into the server's one file (scripts/bundle.mjs) saves when
// a control plane starts, against the same build with every third-party package left an import
// that node resolves and loads from node_modules (how it was built before), in the same run.
// Run from the repository root:
//   node bench/control-plane/process-start.mjs
// Settings: BENCH_ROUNDS (6), DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres: the server
// a throwaway database is created on and dropped from).
//
// Both builds are made here, from the same sources, into a scratch directory inside
// apps/control-plane (so the imports resolve as they do for dist/server.js). Each round starts each
// build once on PostgreSQL (the throwaway database, migrated before the rounds) and once on PGlite
// (a copy of a migrated data directory), the order flipping each round so the machine's load
// drifts over both alike, with `node --enable-source-maps` as `npm start` and the container run
// it; it records the CPU the process used and the time until GET /api/v1/health answered 200.
import { cpSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleOptions } from '../../scripts/bundle.mjs';
import { median, migratedDataDir, startBuiltServer, stopProcess } from './start-kit.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const APP = fileURLToPath(new URL('../../apps/control-plane/', import.meta.url));
const FLAGS = ['--enable-source-maps'];

/** The reference build: every bare import outside the workspace stays an import. */
const thirdPartyAsImports = {
  name: 'third-party-as-imports',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@switchyard/') ? undefined : { path: args.path, external: true },
    );
  },
};

const BUILDS = {
  'third-party as imports': (entry, outfile) => ({
    ...bundleOptions(entry, outfile, []),
    plugins: [thirdPartyAsImports],
  }),
  bundled: (entry, outfile) => bundleOptions(entry, outfile),
};

const { default: pg } = await import('pg');
const admin = new pg.Client({ connectionString: DATABASE_URL });
await admin.connect();
const database = `switchyard_bench_start_${process.pid}`;
await admin.query(`create database ${database}`);
const url = new URL(DATABASE_URL);
url.pathname = `/${database}`;
const databaseUrl = url.href;

const work = mkdtempSync(join(APP, '.bench-process-start-'));
try {
  const entries = {};
  for (const [name, options] of Object.entries(BUILDS)) {
    const outfile = join(work, name.replaceAll(' ', '-'), 'server.js');
    const result = await build(options(join(APP, 'src/server.ts'), outfile));
    entries[name] = outfile;
    const modules = Object.keys(result.metafile.inputs).length;
    console.log(`${name}: ${modules} modules bundled, ${(statSync(outfile).size / 1e6).toFixed(2)} MB`);
  }
  const template = await migratedDataDir(entries.bundled, work);
  // The first start migrates the PostgreSQL database; the rounds start on the migrated one.
  const migrating = await startBuiltServer(entries.bundled, {
    dir: work,
    env: { DATABASE_URL: databaseUrl },
  });
  await stopProcess(migrating.child, 'SIGTERM');

  const measure = async (entry, env, withTemplate) => {
    const dir = mkdtempSync(join(work, 'run-'));
    if (withTemplate) cpSync(template, join(dir, 'control-plane'), { recursive: true });
    const { child, ms, cpuMs } = await startBuiltServer(entry, { flags: FLAGS, dir, env });
    // Gracefully, so the next start on PostgreSQL finds no replica lease left to wait out.
    await stopProcess(child, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    return { ms, cpuMs };
  };
  const results = Object.fromEntries(Object.keys(BUILDS).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? Object.keys(BUILDS).reverse() : Object.keys(BUILDS);
    for (const name of order) {
      const postgres = await measure(entries[name], { DATABASE_URL: databaseUrl }, false);
      const pglite = await measure(entries[name], {}, true);
      results[name].push({ postgres, pglite });
    }
    const line = Object.entries(results)
      .map(([name, runs]) => {
        const { postgres, pglite } = runs.at(-1);
        return `${name}: PostgreSQL ${postgres.cpuMs} ms CPU, PGlite ${pglite.cpuMs} ms CPU`;
      })
      .join(' | ');
    console.log(`round ${round + 1}: ${line}`);
  }

  const rows = [
    ['PostgreSQL: CPU to healthy, ms', (run) => run.postgres.cpuMs],
    ['PostgreSQL: time to healthy, ms', (run) => run.postgres.ms],
    ['PGlite: CPU to healthy, ms', (run) => run.pglite.cpuMs],
    ['PGlite: time to healthy, ms', (run) => run.pglite.ms],
  ];
  console.log(`\nNode ${process.version}, ${ROUNDS} rounds, medians:`);
  console.log('| measure | third-party as imports | bundled | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const [label, pick] of rows) {
    const reference = median(results['third-party as imports'].map(pick));
    const bundled = median(results.bundled.map(pick));
    console.log(
      `| ${label} | ${reference.toFixed(0)} | ${bundled.toFixed(0)} | ${(bundled / reference).toFixed(2)} |`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.end();
}
