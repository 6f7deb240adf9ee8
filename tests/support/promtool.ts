import { DEBIAN_INSTALL_TIMEOUT_MS, ensureDebianPackages, isExecutable } from './debian-packages.ts';

/** Where Debian's `prometheus` package puts its two programs. */
export const PROMTOOL = '/usr/bin/promtool';
export const PROMETHEUS = '/usr/bin/prometheus';

/** Debian's package the monitoring test needs: promtool and the Prometheus server. */
export const PROMETHEUS_PACKAGES = ['prometheus'] as const;

/** apt-get downloads about 25 MB and may first wait for another apt-get to release the dpkg lock. */
export const PROMETHEUS_INSTALL_TIMEOUT_MS = DEBIAN_INSTALL_TIMEOUT_MS;

/**
 * Makes sure Debian's `prometheus` package (promtool and the server) is installed: the monitoring
 * page checks its alerting rules with promtool, and its test loads them into a real Prometheus.
 * As with Chromium for the browser tests (tests/support/chromium.ts), a root user on a machine
 * with apt-get (a fresh container, CI) gets it installed once, so `npm test` alone works there;
 * otherwise the error says what to run. The package's service is not started (no init system runs
 * it in a container; the test starts its own server).
 */
export async function ensurePrometheus(): Promise<void> {
  await ensureDebianPackages({
    packages: PROMETHEUS_PACKAGES,
    present: () => isExecutable(PROMTOOL) && isExecutable(PROMETHEUS),
    howToInstall:
      "Install Debian's prometheus package: `sudo apt-get install --no-install-recommends prometheus`.",
  });
}
