#!/usr/bin/env node
// Builds the command line into one plain-JavaScript file, dist/switchyard.js, that Node runs as
// it is: the CLI's own code, the workspace client (@switchyard/client ships TypeScript sources)
// and the few libraries it uses are all bundled, so the file works from the checkout
// (`npx switchyard`) and after `npm install -g` of the package, which then needs no dependency.
import { chmodSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const outfile = fileURLToPath(new URL('../dist/switchyard.js', import.meta.url));
await build({
  entryPoints: [fileURLToPath(new URL('../src/main.ts', import.meta.url))],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // commander is CommonJS and requires Node's modules: give the ES module bundle a require.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
console.log(`${outfile}: ${statSync(outfile).size} bytes`);
