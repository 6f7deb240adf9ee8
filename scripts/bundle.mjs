#!/usr/bin/env node
// Builds one server entry of an app into a single plain-JavaScript file that production runs
// with `node`, never tsx:
//
//   node ../../scripts/bundle.mjs <entry.ts> <outfile.js>      (run from the app's directory)
//
// The app's own code, the workspace packages (@switchyard/*, which ship TypeScript sources) and the
// third-party packages are bundled: a server then starts from one file instead of resolving,
// reading and compiling some 1,400 modules of node_modules one by one, which was most of its
// start-up CPU (bench/control-plane/process-start.mjs measures both ways). A few packages stay
// imports that a production install (`npm install --omit=dev -w <app>`) provides; see
// LOADED_FROM_NODE_MODULES.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * Packages loaded from node_modules at run time. PGlite reads its WebAssembly, data and extension
 * files from beside its own module, and pino can start transports in worker threads by file path;
 * pino-pretty goes with pino. The rest are the drivers knex can load for databases other than
 * PostgreSQL: none is installed, and knex requires one only when asked for that database.
 */
export const LOADED_FROM_NODE_MODULES = [
  '@electric-sql/pglite',
  'pino',
  'pino-pretty',
  'better-sqlite3',
  'mariadb',
  'mysql',
  'mysql2',
  'oracledb',
  'pg-native',
  'pg-query-stream',
  'sqlite3',
  'tedious',
];

/**
 * The esbuild options of a server bundle. `external` names the packages left as imports:
 * LOADED_FROM_NODE_MODULES by default.
 */
export function bundleOptions(entry, outfile, external = LOADED_FROM_NODE_MODULES) {
  return {
    entryPoints: [resolve(entry)],
    outfile: resolve(outfile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The bundled CommonJS packages require Node's built-in modules; an ES module has no
    // `require` of its own, so the bundle makes one.
    banner: {
      js: "import { createRequire as createRequireOfBundle } from 'node:module';\nconst require = createRequireOfBundle(import.meta.url);",
    },
    external: external.flatMap((name) => [name, `${name}/*`]),
    sourcemap: true,
    // Stack traces name the TypeScript files once Node reads the map (`node --enable-source-maps`).
    sourcesContent: false,
    // Class and function names stay as written: logs and problem documents print some of them,
    // and bundling would otherwise rename those that two packages both define.
    keepNames: true,
    logLevel: 'warning',
    metafile: true,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [entry, outfile] = process.argv.slice(2);
  if (!entry || !outfile) {
    console.error('usage: node scripts/bundle.mjs <entry.ts> <outfile.js>');
    process.exit(2);
  }
  const result = await build(bundleOptions(entry, outfile));
  const modules = Object.keys(result.metafile.inputs).length;
  console.log(`${outfile}: ${modules} modules, ${statSync(outfile).size} bytes`);
}
