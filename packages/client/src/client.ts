import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './schema.d.ts';

export interface SwitchyardClientOptions {
  /** Where the control plane listens, e.g. `http://127.0.0.1:8080` (no trailing path). */
  baseUrl: string;
  /** The API key (SERVICE_API_KEY); sent as `X-API-Key` on every call when set. */
  apiKey?: string;
  /** The fetch to use (a test's, or one with a proxy agent); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
}

/** The control-plane client: openapi-fetch typed by the control plane's own OpenAPI document. */
export type SwitchyardClient = Client<paths>;

/**
 * Sends the API key in the header the server checks first. A header the caller set on one call
 * wins, so a call can use another key.
 */
function apiKeyMiddleware(apiKey: string): Middleware {
  return {
    onRequest({ request }) {
      if (!request.headers.has('X-API-Key')) request.headers.set('X-API-Key', apiKey);
      return request;
    },
  };
}

/**
 * Keeps the URL of a request that got no answer on its error, so `unwrap` can say which server
 * could not be reached (Node's fetch only says "fetch failed").
 */
const networkErrorUrl: Middleware = {
  onError({ request, error }) {
    if (error instanceof Error && error.name !== 'AbortError') {
      Object.assign(error, { requestUrl: request.url });
    }
    return undefined;
  },
};

/**
 * A client of the control-plane API. Every path, parameter, body and answer is typed from the
 * OpenAPI document the server publishes:
 *
 * ```ts
 * const client = createSwitchyardClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 * const health = await unwrap(client.GET('/api/v1/health'));
 * ```
 */
export function createSwitchyardClient(options: SwitchyardClientOptions): SwitchyardClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (options.apiKey) client.use(apiKeyMiddleware(options.apiKey));
  client.use(networkErrorUrl);
  return client;
}
