#!/usr/bin/env node
// Starts both Switchyard apps on the embedded database and stops both cleanly on Ctrl-C.
// `npm start` builds the docs site first (turbo), then runs this.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const env = { ...process.env, SWITCHYARD_DATA_DIR: resolve(process.env.SWITCHYARD_DATA_DIR ?? '.data') };
mkdirSync(env.SWITCHYARD_DATA_DIR, { recursive: true });

const apps = [
  { name: 'control-plane', entry: 'apps/control-plane/src/server.ts', ready: /listening on (\S+)/ },
  { name: 'docs', entry: 'apps/docs/server/server.ts', ready: /listening on (\S+)/ },
];

const urls = new Map();
const children = apps.map((app) => {
  const child = spawn(process.execPath, ['--import', 'tsx', app.entry], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const relay = (stream, target) => {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        target.write(`[${app.name}] ${line.replace(/^\[[\w-]+\] /, '')}\n`);
        const match = app.ready.exec(line);
        if (match) announce(app.name, match[1]);
      }
    });
  };
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    app.exited = true;
    if (!stopping) {
      console.error(`[${app.name}] exited (${signal ?? `code ${code}`}); stopping the other app`);
      stop(code || 1);
    } else if (apps.every((a) => a.exited)) {
      process.exit(exitCode);
    }
  });
  return child;
});

function announce(name, url) {
  urls.set(name, url);
  if (urls.size < apps.length) return;
  const cp = urls.get('control-plane');
  console.log(`
Switchyard is running (data in ${env.SWITCHYARD_DATA_DIR})
  control plane  ${cp}   health: ${cp}/api/v1/health
  docs site      ${urls.get('docs')}
Press Ctrl-C to stop both.
`);
}

let stopping = false;
let exitCode = 0;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  // A child that ignores SIGTERM for 10 s is killed so Ctrl-C always returns the terminal.
  setTimeout(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    process.exit(exitCode || 1);
  }, 10_000).unref();
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
