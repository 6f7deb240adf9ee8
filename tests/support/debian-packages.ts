import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/**
 * How long a first run may take to install what a test needs: apt-get downloads up to about 100 MB
 * (Chromium), and may first wait for another apt-get (two test runs at once) to release the dpkg lock.
 */
export const DEBIAN_INSTALL_TIMEOUT_MS = 15 * 60_000;

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function isReadable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
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

export interface DebianPackages {
  /** The package names apt-get installs. */
  packages: readonly string[];
  /** Whether what the tests run is in place (executables, modules). */
  present(): boolean;
  /** What a person does by hand instead: the apt-get line, or a variable pointing elsewhere. */
  howToInstall: string;
  /** Install recommended packages too (Chromium's fonts); off by default. */
  withRecommends?: boolean;
}

/**
 * Makes sure the Debian packages a test runs are installed, so that `npm test` alone works on a
 * fresh machine: when they are missing and the tests run as root on a machine with apt-get (a
 * fresh container, CI), they are installed once; otherwise the error says what to run. A
 * package's service is never started: the tests start their own processes.
 */
export async function ensureDebianPackages(need: DebianPackages): Promise<void> {
  if (need.present()) return;
  const names = need.packages.join(' ');
  if (process.getuid?.() !== 0 || !isExecutable('/usr/bin/apt-get')) {
    throw new Error(`${names}: not installed. ${need.howToInstall}`);
  }
  process.stderr.write(`[tests] ${names} missing: installing with apt-get\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for a concurrent apt-get (another test run installing the same packages) instead of
  // failing on the dpkg lock; once it is done, the install below finds them and does nothing.
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  const recommends = need.withRecommends ? [] : ['--no-install-recommends'];
  try {
    // A fresh machine (a container image) often has no package lists at all, so update first.
    await run('apt-get', [...lock, 'update', '-qq'], env);
    await run('apt-get', [...lock, 'install', '-y', '-qq', ...recommends, ...need.packages], env);
  } catch (error) {
    throw new Error(`installing ${names} failed. ${need.howToInstall}\n${(error as Error).message}`);
  }
  // A package of another layout (another distribution's) must not end in a bare ENOENT later.
  if (!need.present()) {
    throw new Error(
      `apt-get installed ${names}, but what the tests run is still missing. ${need.howToInstall}`,
    );
  }
  process.stderr.write(`[tests] installed ${names}\n`);
}
