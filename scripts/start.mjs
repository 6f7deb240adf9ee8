#!/usr/bin/env node
// Starts both Switchyard apps on the embedded database and stops both cleanly on Ctrl-C.
// `npm start` builds both apps and the dashboard the control plane serves at /ui/ first (turbo),
// then runs the two servers' builds with node: never tsx.
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
  {
    name: 'control-plane',
    label: 'the control plane',
    entry: 'apps/control-plane/dist/server.js',
    stopsIn: 'requests and calls to agents under way, up to 20 s',
  },
  {
    name: 'docs',
    label: 'the docs site',
    entry: 'apps/docs/dist/front-server.js',
    stopsIn: 'requests under way, up to 10 s',
  },
];

// How long the apps get to stop after Ctrl-C before they are killed. The control plane lets
// requests under way finish for up to 10 s, then calls it made to agents get up to 10 s more
// (apps/control-plane/README.md), and then it closes the event bus and the database: 20 s and a
// margin, the same 25 s compose.yaml gives it. The docs site needs 10 s (DOCS_SHUTDOWN_GRACE).
const STOP_GRACE_MS = 25_000;

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
      let url;
      for (const line of lines) {
        target.write(`[${app.name}] ${line.replace(/^\[[\w-]+\] /, '')}\n`);
        url ??= listening.exec(line)?.[1];
      }
      // After the whole chunk, so no line of it lands inside the banner.
      if (url) announce(app.name, url);
    });
    stream.on('end', () => {
      if (pending) target.write(`[${app.name}] ${pending}\n`);
    });
  };
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  child.on('exit', () => {
    app.exited = true;
  });
  // 'close' comes after the child's output has been read to its end, so its last lines (the
  // control plane's `stopped`) are relayed before this process exits.
  child.on('close', (code, signal) => {
    app.closed = true;
    if (!stopping) {
      console.error(`[${app.name}] exited (${signal ?? `code ${code}`}); stopping the other app`);
      stop(code || 1);
      return;
    }
    if (apps.every((a) => a.closed)) process.exit(exitCode);
    // Said only when the wait lasts: the other app is often a few milliseconds from its own exit.
    setTimeout(() => {
      const running = apps.filter((a) => !a.exited);
      if (running.length === 0) return;
      const waiting = running.map((a) => a.label).join(' and ');
      console.error(`${capitalized(app.label)} stopped; still waiting for ${waiting}.`);
    }, 1_000).unref();
  });
  return child;
});

function capitalized(text) {
  return text[0].toUpperCase() + text.slice(1);
}

function announce(name, url) {
  if (urls.has(name)) return;
  urls.set(name, url);
  if (urls.size < apps.length) return;
  const cp = urls.get('control-plane');
  // One write with a blank line either side: relayed lines come before or after it, never inside.
  process.stdout.write(
    [
      '',
      `Switchyard is running (data in ${env.SWITCHYARD_DATA_DIR})`,
      `  control plane  ${cp}   health: ${cp}/api/v1/health`,
      `  dashboard      ${cp}/ui/`,
      `  docs site      ${urls.get('docs')}`,
      'Press Ctrl-C to stop both.',
      '',
      '',
    ].join('\n'),
  );
}

let stopping = false;
let exitCode = 0;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  const running = apps.filter((app) => !app.exited);
  for (const [i, child] of children.entries()) if (!apps[i].exited) child.kill('SIGTERM');
  if (running.length > 0) {
    const waits = running.map((a) => `${a.label} (${a.stopsIn})`).join(' and ');
    console.error(
      `\nStopping: waiting up to ${STOP_GRACE_MS / 1000} s for ${waits}. Press Ctrl-C again to stop at once.`,
    );
  }
  setTimeout(() => {
    console.error(`Still running after ${STOP_GRACE_MS / 1000} s: ${kill()}; killed.`);
    process.exit(exitCode || 1);
  }, STOP_GRACE_MS).unref();
}

/** Kills the apps still running; says which. */
function kill() {
  const killed = [];
  for (const [i, child] of children.entries()) {
    if (apps[i].exited) continue;
    child.kill('SIGKILL');
    killed.push(apps[i].label);
  }
  return killed.join(' and ');
}

// A second Ctrl-C does not wait: the user has seen what is being waited for and chose not to.
const onSignal = () => {
  if (!stopping) return stop(0);
  const killed = kill();
  if (killed) console.error(`Stopping at once: killed ${killed}.`);
  process.exit(1);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
