import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/** Where Debian's `nginx` package puts the server; the deploy tests use nothing else by default. */
export const DEBIAN_NGINX = '/usr/sbin/nginx';

/**
 * Where Debian's `libnginx-mod-http-js` package puts njs, which the configurations under
 * deploy/nginx load (`load_module`) to negotiate `Accept` as the front server does.
 */
export const DEBIAN_NJS_MODULE = '/usr/lib/nginx/modules/ngx_http_js_module.so';

/** Debian's packages the deploy tests need: the server and its JavaScript module. */
export const NGINX_PACKAGES = ['nginx', 'libnginx-mod-http-js'] as const;

/**
 * How long a first run may take to install nginx: apt-get downloads a few MB, and may first wait
 * for another apt-get (two test runs at once) to release the dpkg lock.
 */
export const NGINX_INSTALL_TIMEOUT_MS = 15 * 60_000;

const HOW_TO_INSTALL =
  "The static-hosting tests run Debian's nginx with its njs module. Install them with " +
  '`sudo apt-get install nginx libnginx-mod-http-js` (Debian/Ubuntu), or set NGINX_PATH to an nginx ' +
  `executable you already have (its njs module must then be at ${DEBIAN_NJS_MODULE}).`;

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isReadable(file: string): boolean {
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

async function installDebianNginx(): Promise<void> {
  process.stderr.write(
    `[tests] nginx or its njs module is missing: installing ${NGINX_PACKAGES.join(' ')} with apt-get\n`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Wait for a concurrent apt-get (another test run installing the same packages) instead of
  // failing on the dpkg lock; once it is done, the install below finds them and does nothing.
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  // A fresh machine (a container image) often has no package lists at all, so update first.
  await run('apt-get', [...lock, 'update', '-qq'], env);
  await run('apt-get', [...lock, 'install', '-y', '-qq', '--no-install-recommends', ...NGINX_PACKAGES], env);
  // `nginx -v` prints its version on stderr, which run() collects with stdout.
  process.stderr.write(`[tests] installed ${(await run(DEBIAN_NGINX, ['-v'], env)).trim()}\n`);
}

/**
 * The nginx executable the deploy tests run: NGINX_PATH when set, else Debian's /usr/sbin/nginx.
 * When that (or the njs module the configurations load) is missing and the tests run as root on a
 * machine with apt-get (a fresh container, CI), Debian's packages are installed once, so that the
 * tests alone work on a fresh machine; otherwise the error says what to run.
 */
export async function nginxExecutable(): Promise<string> {
  const configured = process.env.NGINX_PATH;
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw new Error(`NGINX_PATH is ${configured}, which is not an executable file. ${HOW_TO_INSTALL}`);
  }
  if (isExecutable(DEBIAN_NGINX) && isReadable(DEBIAN_NJS_MODULE)) return DEBIAN_NGINX;
  const root = process.getuid?.() === 0;
  if (!root || !isExecutable('/usr/bin/apt-get')) {
    throw new Error(`${DEBIAN_NGINX} or ${DEBIAN_NJS_MODULE} is missing. ${HOW_TO_INSTALL}`);
  }
  try {
    await installDebianNginx();
  } catch (error) {
    throw new Error(
      `nginx is missing and installing it failed. ${HOW_TO_INSTALL}\n${(error as Error).message}`,
    );
  }
  if (!isExecutable(DEBIAN_NGINX) || !isReadable(DEBIAN_NJS_MODULE)) {
    throw new Error(
      `apt-get installed ${NGINX_PACKAGES.join(' ')}, but nginx or njs is still missing. ${HOW_TO_INSTALL}`,
    );
  }
  return DEBIAN_NGINX;
}
