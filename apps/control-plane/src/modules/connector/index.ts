/** The connector API: token-authenticated management of reasoners, versions and weights (/connector/*). */
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { NodeRuntime } from '../nodes/index.ts';
import type { ConnectorAccess } from './auth.ts';
import { CONNECTOR_PREFIXES, type ConnectorEndpoint } from './endpoints.ts';
import { connectorRouter } from './routes.ts';
import { createConnectorService } from './service.ts';

export { type ConnectorAccess, connectorGuard } from './auth.ts';
export { CONNECTOR_PREFIXES, type ConnectorEndpoint } from './endpoints.ts';
export { CONNECTOR_SECURITY, CONNECTOR_SECURITY_SCHEMES, connectorOpenApi } from './openapi.ts';
export { CONNECTOR_CAPABILITIES, type ConnectorCapability, connectorSettings } from './settings.ts';

export interface ConnectorDeps {
  db: Knex;
  nodes: NodeRuntime;
  /** The connector section of the configuration (token, capabilities), read on every request. */
  access: () => ConnectorAccess;
  /** The control plane's API key, which agents expect as X-API-Key on calls to them. */
  agentApiKey?: string;
  /** The control plane's version, for the manifest. */
  version: string;
  /** Endpoints another feature mounts under the connector prefixes, listed in the manifest. */
  extraEndpoints?: readonly ConnectorEndpoint[];
}

/** The connector API mounted under both of its prefixes: one service, one router per prefix. */
export function connectorRouters(deps: ConnectorDeps): Router[] {
  const service = createConnectorService({ db: deps.db, nodes: deps.nodes, agentApiKey: deps.agentApiKey });
  return CONNECTOR_PREFIXES.map((prefix) =>
    connectorRouter({
      service,
      access: deps.access,
      prefix,
      version: deps.version,
      extraEndpoints: deps.extraEndpoints,
    }),
  );
}
