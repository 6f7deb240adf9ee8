#!/usr/bin/env node
// Builds one server entry of an app into a single plain-JavaScript file that production runs
// with `node`, never tsx:
//
//   node ../../scripts/bundle.mjs <entry.ts> <outfile.js>      (run from the app's directory)
//
// The app's own code and the workspace packages (@switchyard/*, which ship TypeScript sources)
// are bundled; every other package stays an import that a production install
// (`npm install --omit=dev -w <app>`) provides, so native parts, WebAssembly files and worker
// threads (PGlite, pino transports) load from node_modules exactly as in development.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  console.error('usage: node scripts/bundle.mjs <entry.ts> <outfile.js>');
  process.exit(2);
}

/** Leaves third-party packages as imports; a bare specifier of our own workspace is bundled. */
const thirdPartyExternal = {
  name: 'third-party-external',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@switchyard/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

const result = await build({
  entryPoints: [resolve(entry)],
  outfile: resolve(outfile),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Stack traces name the TypeScript files once Node reads the map (`node --enable-source-maps`).
  sourcesContent: false,
  // Class and function names stay as written: logs and problem documents print some of them.
  keepNames: true,
  plugins: [thirdPartyExternal],
  logLevel: 'warning',
  metafile: true,
});
const modules = Object.keys(result.metafile.inputs).length;
console.log(`${outfile}: ${modules} modules, ${statSync(outfile).size} bytes`);
