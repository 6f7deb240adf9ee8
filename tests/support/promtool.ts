import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian's `prometheus` package puts its two programs. */
export const PROMTOOL = '/usr/bin/promtool';
export const PROMETHEUS = '/usr/bin/prometheus';

/** apt-get downloads about 25 MB and may first wait for another apt-get to release the dpkg lock. */
export const PROMETHEUS_INSTALL_TIMEOUT_MS = 15 * 60_000;

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure Debian's `prometheus` package (promtool and the server) is installed: the monitoring
 * page checks its alerting rules with promtool, and its test loads them into a real Prometheus.
 * As with Chromium for the browser tests (tests/support/chromium.ts), a root user on a machine
 * with apt-get (a fresh container, CI) gets it installed once, so `npm test` alone works there;
 * otherwise the error says what to run. The package's service is not started (no init system runs
 * it in a container; the test starts its own server).
 */
export async function ensurePrometheus(): Promise<void> {
  if (isExecutable(PROMTOOL) && isExecutable(PROMETHEUS)) return;
  const howTo =
    "Install Debian's prometheus package: `sudo apt-get install --no-install-recommends prometheus`.";
  if (process.getuid?.() !== 0 || !isExecutable('/usr/bin/apt-get')) {
    throw new Error(`${PROMTOOL} is missing. ${howTo}`);
  }
  process.stderr.write(`[tests] ${PROMTOOL} is missing: installing Debian's prometheus with apt-get\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  try {
    await run('apt-get', [...lock, 'update', '-qq'], { env });
    await run('apt-get', [...lock, 'install', '-y', '-qq', '--no-install-recommends', 'prometheus'], { env });
  } catch (error) {
    throw new Error(`installing prometheus failed (${(error as Error).message}). ${howTo}`);
  }
  // A package of another layout (another distribution's) must not end in a bare ENOENT later.
  if (!isExecutable(PROMTOOL) || !isExecutable(PROMETHEUS)) {
    throw new Error(
      `apt-get installed prometheus, but ${PROMTOOL} or ${PROMETHEUS} is still missing. ${howTo}`,
    );
  }
}
