import { ApiProblem, type SwitchyardClient, unwrap } from '@switchyard/client';
import { queryOptions } from '@tanstack/react-query';

/**
 * Traffic weights change only through the connector API, with its own token
 * (SERVICE_CONNECTOR_TOKEN) and the capability versions:write. Whether the connector is on at all
 * comes from the overview (`connector.enabled`); with a token, its manifest says what it may do:
 * - `token-refused`: the connector does not know the token (401);
 * - `read-only`: the token is right but lacks versions:write;
 * - `editable`: the token may set weights.
 */
export type TokenAccess =
  | { state: 'token-refused' }
  | { state: 'read-only'; granted: string[] }
  | { state: 'editable' };

export const WRITE_CAPABILITY = 'versions:write';

/** Sends the connector token in the header only the connector reads. */
const withToken = (token: string) => ({ 'X-Connector-Token': token });

/**
 * What the token may do with weights. A refused token is an answer here, not an error: the
 * connector's 401 is about its token, and must not make the header ask for the API key.
 */
export async function readTokenAccess(client: SwitchyardClient, token: string): Promise<TokenAccess> {
  try {
    const manifest = await unwrap(client.GET('/connector/manifest', { headers: withToken(token) }));
    return manifest.capabilities.includes(WRITE_CAPABILITY)
      ? { state: 'editable' }
      : { state: 'read-only', granted: manifest.capabilities };
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 401) return { state: 'token-refused' };
    throw error;
  }
}

export function tokenAccessQuery(client: SwitchyardClient, token: string) {
  return queryOptions({
    // The token is part of the key so a new one is asked about at once; it never leaves the tab.
    queryKey: ['connector-access', token],
    queryFn: () => readTokenAccess(client, token),
    staleTime: 60_000,
  });
}

/** PUT /connector/reasoners/{node}/versions/{version}/weight: the version as it now is. */
export function setWeight(
  client: SwitchyardClient,
  token: string,
  target: { nodeId: string; version: string; weight: number },
) {
  return unwrap(
    client.PUT('/connector/reasoners/{id}/versions/{version}/weight', {
      params: { path: { id: target.nodeId, version: target.version } },
      headers: withToken(token),
      body: { weight: target.weight },
    }),
  );
}
