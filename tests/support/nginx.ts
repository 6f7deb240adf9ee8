import {
  DEBIAN_INSTALL_TIMEOUT_MS,
  ensureDebianPackages,
  isExecutable,
  isReadable,
} from './debian-packages.ts';

/** Where Debian's `nginx` package puts the server; the deploy tests use nothing else by default. */
export const DEBIAN_NGINX = '/usr/sbin/nginx';

/**
 * Where Debian's `libnginx-mod-http-js` package puts njs, which the configurations under
 * deploy/nginx load (`load_module`) to negotiate `Accept` as the front server does.
 */
export const DEBIAN_NJS_MODULE = '/usr/lib/nginx/modules/ngx_http_js_module.so';

/** Debian's packages the deploy tests need: the server and its JavaScript module. */
export const NGINX_PACKAGES = ['nginx', 'libnginx-mod-http-js'] as const;

/** How long a first run may take to install nginx (a few MB, maybe after another apt-get). */
export const NGINX_INSTALL_TIMEOUT_MS = DEBIAN_INSTALL_TIMEOUT_MS;

const HOW_TO_INSTALL =
  "The static-hosting tests run Debian's nginx with its njs module. Install them with " +
  '`sudo apt-get install nginx libnginx-mod-http-js` (Debian/Ubuntu), or set NGINX_PATH to an nginx ' +
  `executable you already have (its njs module must then be at ${DEBIAN_NJS_MODULE}).`;

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
  await ensureDebianPackages({
    packages: NGINX_PACKAGES,
    present: () => isExecutable(DEBIAN_NGINX) && isReadable(DEBIAN_NJS_MODULE),
    howToInstall: HOW_TO_INSTALL,
  });
  return DEBIAN_NGINX;
}
