#!/usr/bin/env node
// What `switchyard` runs: the build, dist/switchyard.js. This file is in the repository so that
// `npm install` links the command into node_modules/.bin before anything is built (npm links only
// files that exist); it says how to build when the build is missing.
import { existsSync } from 'node:fs';

const build = new URL('../dist/switchyard.js', import.meta.url);
if (!existsSync(build)) {
  process.stderr.write(
    'error: switchyard is not built yet.\nfix: run `npm run build -w @switchyard/cli` (or `npm start`, which builds it) in the checkout.\n',
  );
  process.exit(1);
}
await import(build.href);
