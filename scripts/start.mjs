#!/usr/bin/env node
// Starts both Switchyard apps on the embedded database and stops both cleanly on Ctrl-C.
// `npm start` builds both apps first (turbo), then runs their builds with node: never tsx.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { controlPlaneDocsUrl } from './docs-site-url.mjs';

const root = resolve(import.meta.dirname, '..');
const env = { ...process.env, SWITCHYARD_DATA_DIR: resolve(process.env.SWITCHYARD_DATA_DIR ?? '.data') };
mkdirSync(env.SWITCHYARD_DATA_DIR, { recursive: true });

/** A port nothing listens on right now, on the interface the docs site will listen on. */
function freePort(host) {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, host, () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

// Port 0 asks for any free port; the docs server would only say which once it listens, and the
// control plane needs the docs URL when it starts, so the port is picked here and passed on.
if (env.DOCS_PORT?.trim() === '0')
  env.DOCS_PORT = String(await freePort(env.DOCS_HOST?.trim() || '127.0.0.1'));
// Both apps write JSON lines when their output is a pipe, as it is here; a person at a terminal
// gets readable lines instead, unless they chose a format.
if (process.stdout.isTTY) {
  env.LOG_FORMAT ??= 'pretty';
  env.DOCS_LOG_FORMAT ??= 'pretty';
}
// Without this, error documents would name the default docs port wherever the docs site runs.
env.SWITCHYARD_DOCS_URL = controlPlaneDocsUrl(env);

// The URL stops at a quote or an escape as well as at white space: an app may log JSON lines
// (`"msg":"listening on http://…"`) or coloured ones.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the colour codes that end a URL.
const listening = /listening on (https?:\/\/[^\s"'\\\x1b]+)/;
const apps = [
  { name: 'control-plane', entry: 'apps/control-plane/dist/server.js', ready: listening },
  { name: 'docs', entry: 'apps/docs/dist/front-server.js', ready: listening },
];

const urls = new Map();
const children = apps.map((app) => {
  const child = spawn(process.execPath, ['--enable-source-maps', app.entry], {
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
