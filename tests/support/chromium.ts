import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser; the browser tests use nothing else by default. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * How long a first run may take to install Chromium: apt-get downloads about 100 MB of packages,
 * and may first wait for another apt-get (two test runs at once) to release the dpkg lock.
 */
export const CHROMIUM_INSTALL_TIMEOUT_MS = 15 * 60_000;

const HOW_TO_INSTALL =
  "The browser tests drive Debian's Chromium. Install it with `sudo apt-get install chromium` " +
  '(Debian/Ubuntu), or set CHROMIUM_PATH to the executable of a Chromium or Chrome you already have.';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command to its end; resolves with its combined output, rejects with it on a non-zero exit. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

async function installDebianChromium(): Promise<void> {
  process.stderr.write(`[tests] ${DEBIAN_CHROMIUM} is missing: installing Debian's chromium with apt-get\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for a concurrent apt-get (another test run installing the same package) instead of
  // failing on the dpkg lock; once it is done, the install below finds the package and does nothing.
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  // A fresh machine (a container image) often has no package lists at all, so update first.
  await run('apt-get', [...lock, 'update', '-qq'], env);
  await run('apt-get', [...lock, 'install', '-y', '-qq', 'chromium'], env);
  // Debian's wrapper script prints shell noise around the version; keep the version line.
  const version = (await run(DEBIAN_CHROMIUM, ['--version'], env)).match(/^Chromium .*$/m)?.[0];
  process.stderr.write(`[tests] installed ${version ?? DEBIAN_CHROMIUM}\n`);
}

/**
 * The Chromium executable the browser tests launch: CHROMIUM_PATH when set, else Debian's
 * /usr/bin/chromium. When that is missing and the tests run as root on a machine with apt-get
 * (a fresh container, CI), Debian's package is installed once, so that `npm test` alone works on a
 * fresh machine; otherwise the error says what to run.
 */
export async function chromiumExecutable(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new Error(`CHROMIUM_PATH is ${configured}, which is not an executable file. ${HOW_TO_INSTALL}`);
  }
  if (isExecutable(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  const root = process.getuid?.() === 0;
  if (!root || !isExecutable('/usr/bin/apt-get')) {
    throw new Error(`${DEBIAN_CHROMIUM} is missing. ${HOW_TO_INSTALL}`);
  }
  try {
    await installDebianChromium();
  } catch (error) {
    throw new Error(
      `${DEBIAN_CHROMIUM} is missing and installing it failed. ${HOW_TO_INSTALL}\n${(error as Error).message}`,
    );
  }
  if (!isExecutable(DEBIAN_CHROMIUM)) {
    throw new Error(`apt-get installed chromium, but ${DEBIAN_CHROMIUM} is still missing. ${HOW_TO_INSTALL}`);
  }
  return DEBIAN_CHROMIUM;
}

/** Finds (or installs, see chromiumExecutable) Chromium and launches it headless. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumExecutable(),
    args: [
      '--headless',
      // Containers run the tests as root, where Chromium's sandbox cannot start.
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      // Nothing but the site under test goes over the network.
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
