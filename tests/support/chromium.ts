import { type Browser, chromium } from 'playwright-core';
import { DEBIAN_INSTALL_TIMEOUT_MS, ensureDebianPackages, isExecutable } from './debian-packages.ts';

/** Where Debian's `chromium` package puts the browser; the browser tests use nothing else by default. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Debian's package the browser tests need (installed with its recommended packages: fonts). */
export const CHROMIUM_PACKAGES = ['chromium'] as const;

/** How long a first run may take to install Chromium (about 100 MB of packages). */
export const CHROMIUM_INSTALL_TIMEOUT_MS = DEBIAN_INSTALL_TIMEOUT_MS;

const HOW_TO_INSTALL =
  "The browser tests drive Debian's Chromium. Install it with `sudo apt-get install chromium` " +
  '(Debian/Ubuntu), or set CHROMIUM_PATH to the executable of a Chromium or Chrome you already have.';

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
  await ensureDebianPackages({
    packages: CHROMIUM_PACKAGES,
    present: () => isExecutable(DEBIAN_CHROMIUM),
    howToInstall: HOW_TO_INSTALL,
    withRecommends: true,
  });
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
