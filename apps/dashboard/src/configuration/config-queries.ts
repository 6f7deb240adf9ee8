import { type paths, type SwitchyardClient, unwrap } from '@switchyard/client';

/** A config with its text, as the JSON answer of a get (the default; raw text only when asked for). */
type StoredConfig =
  paths['/api/v1/configs/{config_name}']['get']['responses'][200]['content']['application/json'];
type StoredVersion =
  paths['/api/v1/configs/{config_name}/versions/{version}']['get']['responses'][200]['content']['application/json'];

import { queryOptions } from '@tanstack/react-query';

/** Every configuration query starts with this key. */
export const CONFIGS_KEY = ['configs'] as const;

/** The name the control plane reads its own settings from (checked on save, applied on reload). */
export const CONTROL_PLANE_CONFIG = 'control-plane';

/** Versions per page (the server's default). */
const VERSION_PAGE = 100;

export function configListQuery(client: SwitchyardClient) {
  return queryOptions({
    queryKey: [...CONFIGS_KEY, 'list'],
    queryFn: () => unwrap(client.GET('/api/v1/configs')),
  });
}

export function configQuery(client: SwitchyardClient, name: string) {
  return queryOptions({
    queryKey: [...CONFIGS_KEY, 'one', name],
    queryFn: async () =>
      (await unwrap(
        client.GET('/api/v1/configs/{config_name}', { params: { path: { config_name: name } } }),
      )) as StoredConfig,
  });
}

export function configVersionsQuery(client: SwitchyardClient, name: string) {
  return queryOptions({
    queryKey: [...CONFIGS_KEY, 'versions', name],
    queryFn: () =>
      unwrap(
        client.GET('/api/v1/configs/{config_name}/versions', {
          params: { path: { config_name: name }, query: { limit: String(VERSION_PAGE) } },
        }),
      ),
  });
}

export function configVersionQuery(client: SwitchyardClient, name: string, version: number) {
  return queryOptions({
    queryKey: [...CONFIGS_KEY, 'version', name, version],
    queryFn: async () =>
      (await unwrap(
        client.GET('/api/v1/configs/{config_name}/versions/{version}', {
          params: { path: { config_name: name, version: String(version) } },
        }),
      )) as StoredVersion,
  });
}

/** Stores `text` under `name` as YAML text (PUT /api/v1/configs/{name}); the server checks control-plane's. */
export function saveConfig(client: SwitchyardClient, name: string, text: string) {
  return unwrap(
    client.PUT('/api/v1/configs/{config_name}', {
      params: { path: { config_name: name } },
      body: text,
      // The text is sent as is: the default serializer would JSON-encode it.
      bodySerializer: (body: string) => body,
      headers: { 'content-type': 'text/yaml; charset=utf-8' },
    }),
  );
}
