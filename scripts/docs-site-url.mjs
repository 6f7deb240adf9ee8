// Which docs URL `npm start` hands the control plane, kept apart from start.mjs so that every
// combination of settings can be tested without starting servers.

/**
 * The base URL of the docs site start.mjs starts, from the docs server's own settings: SITE_URL
 * when set (its public address, e.g. behind a proxy), else the interface and port it listens on,
 * with a wildcard interface reached on loopback. DOCS_PORT must be a real port here, not 0.
 * @param {NodeJS.ProcessEnv} env
 * @returns {string}
 */
export function docsSiteUrl(env) {
  const site = env.SITE_URL?.trim();
  if (site) return site.replace(/\/+$/, '');
  const host = env.DOCS_HOST?.trim() || '127.0.0.1';
  const port = env.DOCS_PORT?.trim() || '4321';
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
  const bracketed = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
  return `http://${bracketed}:${port}`;
}

/**
 * The SWITCHYARD_DOCS_URL for the control plane, whose error documents link to the docs (`type`,
 * `documentation_url`): the one the user set, else the docs site started alongside it.
 * @param {NodeJS.ProcessEnv} env
 * @returns {string}
 */
export function controlPlaneDocsUrl(env) {
  return env.SWITCHYARD_DOCS_URL?.trim() || docsSiteUrl(env);
}
