import { ProblemError } from '@switchyard/shared';
import type { Middleware } from 'koa';
import { keysMatch } from '../../platform/http/auth.ts';
import type { ConnectorCapability } from './settings.ts';

/** The connector section of the configuration, as the guard reads it on every request. */
export interface ConnectorAccess {
  /** SERVICE_CONNECTOR_TOKEN; undefined or blank turns the connector API off (503). */
  token: string | undefined;
  /** What the token may do (connector.capabilities). */
  capabilities: readonly string[];
}

const RESOLUTION_401 =
  'Send the connector token (SERVICE_CONNECTOR_TOKEN) as Authorization: Bearer <token> or X-Connector-Token: <token>; the API key does not open the connector.';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The token a request carries. `X-Connector-Token` decides when present: it names this API only,
 * whereas a gateway in front may put its own credentials in `Authorization`. Otherwise an
 * `Authorization: Bearer` token. Empty carriers (an unset variable in a script) carry nothing.
 */
export function presentedToken(headers: Record<string, string | string[] | undefined>): string | undefined {
  const dedicated = headerValue(headers['x-connector-token'])?.trim();
  if (dedicated) return dedicated;
  const authorization = headerValue(headers.authorization)?.trim();
  const bearer = authorization ? /^Bearer(?:[ \t]+(.*))?$/i.exec(authorization) : null;
  return bearer?.[1]?.trim() || undefined;
}

/**
 * The token the deployment is configured with, or undefined when the connector is off. Trimmed as
 * the presented token is: HTTP strips whitespace around header values, so a token configured with
 * a trailing newline (a secret file) could otherwise never be presented.
 */
export function configuredToken(access: ConnectorAccess): string | undefined {
  return access.token?.trim() || undefined;
}

/** 503 service_unavailable: no token is configured, so nobody can use the connector. */
export function connectorDisabled(): ProblemError {
  return new ProblemError(
    'service_unavailable',
    'The connector API is disabled on this deployment: SERVICE_CONNECTOR_TOKEN (connector.token) is not set.',
    {
      resolution:
        'Set SERVICE_CONNECTOR_TOKEN (or connector.token in the configuration file) on the control plane and restart it.',
    },
  );
}

/**
 * Checks the connector token of a request, in constant time (both sides hashed, as for the API
 * key): 503 when the connector is disabled, 401 with `WWW-Authenticate: Bearer` when the token is
 * missing or wrong. Resolves to nothing when the request may go on.
 */
export function authenticate(
  access: ConnectorAccess,
  headers: Record<string, string | string[] | undefined>,
): void {
  const expected = configuredToken(access);
  if (!expected) throw connectorDisabled();
  const given = presentedToken(headers);
  if (given === undefined || !keysMatch(given, expected)) {
    throw new ProblemError(
      'unauthorized',
      given === undefined
        ? 'This endpoint needs the connector token.'
        : 'The connector token is not the one this deployment is configured with.',
      { resolution: RESOLUTION_401, headers: { 'WWW-Authenticate': 'Bearer' } },
    );
  }
}

/** 403 forbidden naming the capability the endpoint (`endpoint`: method and path template) needs. */
export function missingCapability(
  capability: ConnectorCapability,
  access: ConnectorAccess,
  endpoint: string,
): ProblemError {
  const granted = access.capabilities.length > 0 ? access.capabilities.join(', ') : 'none';
  return new ProblemError(
    'forbidden',
    `This token lacks the capability ${capability}, needed for ${endpoint} (this deployment grants: ${granted}).`,
    {
      resolution: `Add ${capability} to connector.capabilities (SWITCHYARD_CONNECTOR_CAPABILITIES) on the control plane and restart it.`,
      extensions: { capability },
    },
  );
}

/**
 * Koa middleware guarding one connector endpoint: the token first, then `capability` when the
 * endpoint needs one (the manifest needs none). `access` is read on every request.
 */
export function connectorGuard(
  access: () => ConnectorAccess,
  capability: ConnectorCapability | null,
): Middleware {
  return async (ctx, next) => {
    const current = access();
    authenticate(current, ctx.headers);
    if (capability && !current.capabilities.includes(capability)) {
      // @koa/router records the template of the route that matched (`/connector/groups/:groupId`).
      const template = (ctx as { _matchedRoute?: string })._matchedRoute ?? ctx.path;
      throw missingCapability(capability, current, `${ctx.method} ${template}`);
    }
    return next();
  };
}
