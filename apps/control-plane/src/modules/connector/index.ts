/** The connector API: token-authenticated management of reasoners, versions and weights (/connector/*). */
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { Logger } from '../../platform/logger.ts';
import { type ConfigStoreService, configStoreRouter } from '../config-store/index.ts';
import type { NodeRuntime } from '../nodes/index.ts';
import { type ConnectorAccess, connectorGuard } from './auth.ts';
import { CONNECTOR_PREFIXES, type ConnectorEndpoint } from './endpoints.ts';
import type { ConnectorListings } from './listings.ts';
import { connectorRouter } from './routes.ts';
import { createConnectorService } from './service.ts';

export { type ConnectorAccess, configuredToken, connectorGuard } from './auth.ts';
export { CONNECTOR_PREFIXES, type ConnectorEndpoint } from './endpoints.ts';
export { type ConnectorListings, createConnectorListings } from './listings.ts';
export { CONNECTOR_SECURITY, CONNECTOR_SECURITY_SCHEMES, connectorOpenApi } from './openapi.ts';
export { CONNECTOR_CAPABILITIES, type ConnectorCapability, connectorSettings } from './settings.ts';

export interface ConnectorDeps {
  db: Knex;
  nodes: NodeRuntime;
  /** The paged, cached lists (app.ts clears them on every node event). */
  listings: ConnectorListings;
  /** The connector section of the configuration (token, capabilities), read on every request. */
  access: () => ConnectorAccess;
  /** The control plane's API key as it is now (a reload may change it); agents expect it as X-API-Key. */
  agentApiKey: () => string | undefined;
  /** The control plane's version, for the manifest. */
  version: string;
  /** Stored configuration, served under `<prefix>/configs` with the capability config_management. */
  configStore: ConfigStoreService;
  /** Records weight changes and restart requests. */
  log?: Logger;
}

/** The method and path (relative to `prefix`) of every route of a router, for the manifest. */
function endpointsOf(router: Router, prefix: string): ConnectorEndpoint[] {
  return router.stack.flatMap((layer) =>
    layer.methods
      .filter((method) => method !== 'HEAD')
      .map((method) => ({
        method: method as ConnectorEndpoint['method'],
        path: String(layer.path).slice(prefix.length),
        capability: 'config_management' as const,
      })),
  );
}

/**
 * The connector API mounted under both of its prefixes: one service, and per prefix the
 * connector's router and the stored-configuration router behind the connector's guard.
 */
export function connectorRouters(deps: ConnectorDeps): Router[] {
  const service = createConnectorService({
    db: deps.db,
    nodes: deps.nodes,
    listings: deps.listings,
    agentApiKey: deps.agentApiKey,
    log: deps.log,
  });
  return CONNECTOR_PREFIXES.flatMap((prefix) => {
    const configs = configStoreRouter({
      service: deps.configStore,
      prefix: `${prefix}/configs`,
      guard: connectorGuard(deps.access, 'config_management'),
    });
    const connector = connectorRouter({
      service,
      access: deps.access,
      prefix,
      version: deps.version,
      extraEndpoints: endpointsOf(configs, prefix),
    });
    return [connector, configs];
  });
}
