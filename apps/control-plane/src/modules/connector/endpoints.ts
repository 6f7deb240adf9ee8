import type { ConnectorCapability } from './settings.ts';

/** One connector endpoint, relative to the prefix it is mounted under, and what it needs. */
export interface ConnectorEndpoint {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  path: string;
  /** Null: a valid token is enough. */
  capability: ConnectorCapability | null;
}

/** The prefixes the connector API is served under (every endpoint is also served under /api/v1/connector/). */
export const CONNECTOR_PREFIXES = ['/connector', '/api/v1/connector'] as const;

/** The connector's own endpoints (content/api/connector.md), in the manifest's order. */
export const CONNECTOR_ENDPOINTS: readonly ConnectorEndpoint[] = [
  { method: 'GET', path: '/manifest', capability: null },
  { method: 'GET', path: '/reasoners', capability: 'reasoners:read' },
  { method: 'GET', path: '/reasoners/:id', capability: 'reasoners:read' },
  { method: 'GET', path: '/groups', capability: 'reasoners:read' },
  { method: 'GET', path: '/groups/:groupId', capability: 'reasoners:read' },
  { method: 'GET', path: '/reasoners/:id/versions', capability: 'versions:read' },
  { method: 'GET', path: '/reasoners/:id/versions/:version', capability: 'versions:read' },
  { method: 'PUT', path: '/reasoners/:id/versions/:version/weight', capability: 'versions:write' },
  { method: 'POST', path: '/reasoners/:id/versions/:version/restart', capability: 'restart' },
];
