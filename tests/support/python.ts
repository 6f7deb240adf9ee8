import { execFileSync } from 'node:child_process';
import { DEBIAN_INSTALL_TIMEOUT_MS, ensureDebianPackages, isExecutable } from './debian-packages.ts';

/** Where Debian's python3 packages put the interpreter. */
const DEBIAN_PYTHON = '/usr/bin/python3';

/** Debian's package for the clients page's Python example, when no python3 is on PATH. */
export const PYTHON_PACKAGES = ['python3-minimal'] as const;

/** apt-get may first wait for another apt-get to release the dpkg lock. */
export const PYTHON_INSTALL_TIMEOUT_MS = DEBIAN_INSTALL_TIMEOUT_MS;

/** The `python3` on PATH, if there is one that runs. */
function pythonOnPath(): string | undefined {
  try {
    return execFileSync('bash', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A Python 3 interpreter for the pages' Python examples (standard library only): the reader's
 * `python3` when there is one; otherwise Debian's, installed once on a root machine with apt-get
 * (a fresh container, CI), as Chromium and zsh are; otherwise the error says what to run.
 */
export async function ensurePython(): Promise<string> {
  const found = pythonOnPath();
  if (found) return found;
  await ensureDebianPackages({
    packages: PYTHON_PACKAGES,
    present: () => isExecutable(DEBIAN_PYTHON),
    howToInstall: 'Install Python 3: `sudo apt-get install python3-minimal`.',
  });
  return DEBIAN_PYTHON;
}
