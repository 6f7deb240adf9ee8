import { PROBLEM_CONTENT_TYPE } from '@switchyard/shared';
import { z } from 'zod';
import type { oas31, ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import {
  ConfigListSchema,
  ConfigProblemSchema,
  ConfigSchema,
  ConfigSummarySchema,
  ReloadSchema,
  VersionListSchema,
  VersionSchemaOut,
} from './responses.ts';
import {
  MAX_CONFIG_BYTES,
  NamePathSchema,
  UpdatedByHeaders,
  VERSION_LIST_MAX_LIMIT,
  VersionListQuerySchema,
  VersionPathSchema,
} from './schemas.ts';
import { configStoreSettings } from './settings.ts';

const KEPT = configStoreSettings.maxVersions.default;

export interface ConfigStoreOpenApiOptions {
  /** Where the operations live, as given to configStoreRouter. */
  prefix: string;
  /**
   * `apiKey`: behind SERVICE_API_KEY like every API route (the document's default security).
   * `connector`: behind the connector token (schemes `ConnectorBearer`, `ConnectorToken`) and the capability
   * `config_management`, so each operation also documents 401 and 403.
   */
  security: 'apiKey' | 'connector';
}

const summary = {
  name: 'control-plane',
  version: 3,
  bytes: 35,
  updated_by: 'alice',
  created_at: '2026-11-22T07:00:00.000Z',
  updated_at: '2026-11-22T07:05:00.000Z',
};
const text = 'node_health:\n  check_interval: 15s\n';
const RAW_TYPES = ['text/plain', 'application/yaml', 'text/yaml', 'application/x-yaml'];

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

function jsonOrRaw(schema: z.ZodType, example: unknown) {
  return {
    content: {
      'application/json': { schema, example },
      ...Object.fromEntries(RAW_TYPES.map((type) => [type, { schema: z.string(), example: text }])),
    },
  };
}

const badName: ProblemCase = {
  code: 'invalid_request',
  when: 'The name is not 1 to 128 letters, digits, `.`, `_` and `-`, is only dots, or is `reload`.',
  detail: 'The path is invalid: config_name: may contain only letters, digits, ".", "_" and "-"',
  extensions: {
    errors: [{ field: 'config_name', message: 'may contain only letters, digits, ".", "_" and "-"' }],
  },
};

const unknownName: ProblemCase = {
  code: 'not_found',
  when: 'No configuration is stored under the name (or it was deleted).',
  detail: 'No stored configuration named "control-plane".',
};

const invalidSettings = {
  field: 'node_health.check_interval',
  key: 'node_health.check_interval',
  source: 'request body',
  message: '"soon" is not a duration (use 15s, 5m)',
};

/** problemResponses with the 400 answer described by ConfigProblemSchema. */
function configProblemResponses(instance: string, cases: ProblemCase[]) {
  const responses = problemResponses(instance, cases);
  const invalid = responses['400'] as { content?: Record<string, { schema: unknown }> } | undefined;
  if (invalid?.content?.[PROBLEM_CONTENT_TYPE])
    invalid.content[PROBLEM_CONTENT_TYPE].schema = ConfigProblemSchema;
  return responses;
}

export function configStoreOpenApi(options: ConfigStoreOpenApiOptions): ZodOpenApiPathsObject {
  const { prefix } = options;
  const connector = options.security === 'connector';
  const tags = [connector ? 'Connector' : 'Configuration'];
  const idPrefix = connector ? 'connector' : '';
  const operationId = (name: string) =>
    idPrefix
      ? `${idPrefix}${name[0]!.toUpperCase()}${name.slice(1)}${prefix.startsWith('/api/') ? 'Api' : ''}`
      : name;
  const auth: ProblemCase[] = connector
    ? [
        {
          code: 'unauthorized',
          when: 'The request carries no connector token, or a wrong one.',
          detail: 'This endpoint needs the connector token.',
        },
        {
          code: 'forbidden',
          when: 'The connector token lacks the capability `config_management`.',
          detail: 'The connector token lacks the capability config_management.',
        },
      ]
    : [];
  // The connector feature declares these two schemes (`Authorization: Bearer` and X-Connector-Token).
  const requirements: oas31.SecurityRequirementObject[] = [{ ConnectorBearer: [] }, { ConnectorToken: [] }];
  const security = connector ? { security: requirements } : {};
  const problems = (path: string, cases: ProblemCase[]) =>
    configProblemResponses(path.replace('{config_name}', 'control-plane').replace('{version}', '3'), [
      ...cases,
      ...auth,
    ]);
  const op = (operation: ZodOpenApiOperationObject): ZodOpenApiOperationObject => ({
    tags,
    ...security,
    ...operation,
  });

  const one = `${prefix}/{config_name}`;
  return {
    [prefix]: {
      get: op({
        operationId: operationId('listConfigs'),
        summary: 'List stored configurations',
        description: 'Every stored configuration by name, without its text (read one to get it).',
        responses: {
          '200': {
            description: 'The configurations.',
            ...json(ConfigListSchema, { total: 1, configs: [summary] }),
          },
          ...(auth.length ? problems(prefix, []) : {}),
        },
      }),
    },
    [`${prefix}/reload`]: {
      post: op({
        operationId: operationId('reloadConfig'),
        summary: 'Reload the control plane configuration',
        description:
          'Loads the settings again — environment, then the stored configuration `control-plane`, then the file, then defaults; storage, connector and config_source never from the database — and applies them on this replica and, over the event bus, on every other. Settings marked "at once" in the settings reference (the API key, its skip paths, the log level) take effect immediately; other changed settings are listed in `restart_required` and keep their running value. A configuration that fails its checks is refused and nothing changes.',
        responses: {
          '200': {
            description: 'Reloaded.',
            ...json(ReloadSchema, {
              reloaded_at: '2026-11-22T07:06:00.000Z',
              source: 'db',
              changed: ['api.auth.api_key', 'discovery.cache_ttl'],
              applied: ['api.auth.api_key'],
              restart_required: ['discovery.cache_ttl'],
              replicas_notified: true,
            }),
          },
          ...problems(`${prefix}/reload`, [
            {
              code: 'invalid_request',
              when: 'A setting from one of the sources fails its checks; `errors` names each key (`field`, `key`) and its `source`. The running configuration stays.',
              detail:
                'The configuration was not reloaded; the running one stays: node_health.check_interval: "soon" is not a duration (use 15s, 5m) — from database config "control-plane"',
              extensions: { errors: [{ ...invalidSettings, source: 'database config "control-plane"' }] },
            },
            {
              code: 'service_unavailable',
              when: 'The server was not started with `SERVICE_CONFIG_SOURCE=db`.',
              detail:
                'Reload needs a server started with SERVICE_CONFIG_SOURCE=db; this one reads its settings from the environment and file only.',
            },
          ]),
        },
      }),
    },
    [one]: {
      get: op({
        operationId: operationId('getConfig'),
        summary: 'Read a stored configuration',
        description:
          'The record with its text in `content`; with `Accept: text/plain` (or a YAML type) the raw text itself, exactly as stored, with its version in `X-Config-Version`.',
        requestParams: { path: NamePathSchema },
        responses: {
          '200': {
            description: 'The configuration.',
            headers: z.object({
              'X-Config-Version': z
                .string()
                .optional()
                .meta({ description: 'The version, on a raw-text answer.' }),
            }),
            ...jsonOrRaw(ConfigSchema, { ...summary, content: text }),
          },
          ...problems(one, [badName, unknownName]),
        },
      }),
      put: op({
        operationId: operationId('putConfig'),
        summary: 'Store a configuration',
        description: `The body is the raw configuration text (UTF-8, at most ${MAX_CONFIG_BYTES} bytes), not JSON-wrapped; any content type but form encodings. Each write is a new version; the newest ${KEPT} (\`config_store.max_versions\`) stay readable under \`/versions\`, older ones are deleted by the write. The name \`control-plane\` is the control plane's own configuration: its text is checked as settings (YAML, known keys, each value; storage, connector and config_source refused) before it is stored.`,
        requestParams: { path: NamePathSchema, header: UpdatedByHeaders },
        requestBody: {
          required: true,
          content: Object.fromEntries(
            ['text/yaml', 'text/plain', 'application/octet-stream'].map((type) => [
              type,
              { schema: z.string().max(MAX_CONFIG_BYTES), example: text },
            ]),
          ),
        },
        responses: {
          '200': {
            description: 'Replaced: a new version of an existing configuration.',
            ...json(ConfigSummarySchema, summary),
          },
          '201': {
            description: 'Created (also after a deletion).',
            headers: z.object({ Location: z.string().meta({ description: 'The configuration path.' }) }),
            ...json(ConfigSummarySchema, { ...summary, version: 1, updated_at: summary.created_at }),
          },
          ...problems(one, [
            badName,
            {
              code: 'invalid_request',
              when: 'The body is empty, form-encoded, not UTF-8 or contains NUL; `X-Updated-By` is over 200 characters or not printable ASCII.',
              detail: 'The body is not UTF-8 text.',
              extensions: { errors: [{ field: '(body)', message: 'not UTF-8' }] },
            },
            {
              code: 'invalid_request',
              when: 'The text of `control-plane` is not a valid settings document; `errors` names each key (`field`, `key`) and `source`. Nothing is stored.',
              detail: `The configuration "control-plane" is invalid: ${invalidSettings.key}: ${invalidSettings.message} — from request body`,
              extensions: { errors: [invalidSettings] },
            },
            {
              code: 'payload_too_large',
              when: `The body is over ${MAX_CONFIG_BYTES} bytes (by Content-Length before reading, or as counted).`,
              detail: `The configuration is ${MAX_CONFIG_BYTES + 1} bytes; the limit is ${MAX_CONFIG_BYTES} bytes.`,
            },
          ]),
        },
      }),
      delete: op({
        operationId: operationId('deleteConfig'),
        summary: 'Delete a stored configuration',
        description:
          'Removes the configuration; its history stays readable, with the deletion recorded as a version (`X-Updated-By` is recorded with it). Storing the name again starts a new configuration with the next version number.',
        requestParams: { path: NamePathSchema, header: UpdatedByHeaders },
        responses: {
          '204': { description: 'Deleted.' },
          ...problems(one, [badName, unknownName]),
        },
      }),
    },
    [`${one}/versions`]: {
      get: op({
        operationId: operationId('listConfigVersions'),
        summary: 'List the versions of a configuration',
        description: `The versions kept of the name (the newest ${KEPT} by default, \`config_store.max_versions\`), oldest first, without texts; deletions included. At most \`limit\` a page: continue with \`cursor=next_cursor\` until it is null.`,
        requestParams: { path: NamePathSchema, query: VersionListQuerySchema },
        responses: {
          '200': {
            description: 'One page of versions.',
            ...json(VersionListSchema, {
              next_cursor: null,
              name: 'control-plane',
              versions: [
                {
                  version: 1,
                  deleted: false,
                  bytes: 35,
                  updated_by: 'alice',
                  created_at: summary.created_at,
                },
                { version: 2, deleted: true, bytes: null, updated_by: 'bob', created_at: summary.updated_at },
              ],
            }),
          },
          ...problems(`${one}/versions`, [
            badName,
            {
              code: 'invalid_request',
              when: `limit is not a whole number from 1 to ${VERSION_LIST_MAX_LIMIT}, or cursor is not a \`next_cursor\` of this list.`,
              detail:
                'The query is invalid: cursor: is not a cursor this endpoint gave out (use next_cursor as is)',
              extensions: {
                errors: [
                  {
                    field: 'cursor',
                    message: 'is not a cursor this endpoint gave out (use next_cursor as is)',
                  },
                ],
              },
            },
            {
              code: 'not_found',
              when: 'Nothing was ever stored under the name.',
              detail: 'No configuration named "control-plane" was ever stored.',
            },
          ]),
        },
      }),
    },
    [`${one}/versions/{version}`]: {
      get: op({
        operationId: operationId('getConfigVersion'),
        summary: 'Read one version of a configuration',
        description:
          'The version with its text in `content` (null for a deletion); with `Accept: text/plain` or a YAML type, the raw text (a deletion still answers the JSON record).',
        requestParams: { path: VersionPathSchema },
        responses: {
          '200': {
            description: 'The version.',
            ...jsonOrRaw(VersionSchemaOut, {
              name: 'control-plane',
              version: 1,
              deleted: false,
              bytes: 35,
              updated_by: 'alice',
              created_at: summary.created_at,
              content: text,
            }),
          },
          ...problems(`${one}/versions/{version}`, [
            {
              ...badName,
              when: `${badName.when} Or the version is not a whole number from 1.`,
            },
            {
              code: 'not_found',
              when: `The name has no such version, or no longer has it: only the newest ${KEPT} are kept (\`config_store.max_versions\`).`,
              detail: 'The configuration "control-plane" has no version 4.',
            },
          ]),
        },
      }),
    },
  };
}
