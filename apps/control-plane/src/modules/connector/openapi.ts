import { z } from 'zod';
import type { oas31, ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { configStoreOpenApi } from '../config-store/index.ts';
import { MAX_TRAFFIC_WEIGHT } from '../nodes/index.ts';
import { CONNECTOR_PREFIXES } from './endpoints.ts';
import { CONNECTOR_ANSWER_BYTES } from './listings.ts';
import {
  GroupPageSchema,
  GroupSchema,
  ManifestSchema,
  ReasonerPageSchema,
  ReasonerSchema,
  RestartSchema,
  VersionListSchema,
  VersionSchema,
} from './responses.ts';
import {
  encodeFunctionCursor,
  GROUP_LIST_MAX_LIMIT,
  GroupListQuerySchema,
  REASONER_LIST_MAX_LIMIT,
  ReasonerListQuerySchema,
  WEIGHT_BODY_LIMIT,
  WeightBodySchema,
} from './schemas.ts';
import type { ConnectorCapability } from './settings.ts';

/*
 * The connector API as routes.ts serves it, under both prefixes: operations, examples and problem
 * cases. The answers' schemas are in responses.ts.
 */

/** The two carriers of the connector token (SERVICE_CONNECTOR_TOKEN); app.ts adds them to the document. */
export const CONNECTOR_SECURITY_SCHEMES: Record<string, oas31.SecuritySchemeObject> = {
  ConnectorToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Connector-Token',
    description: 'The connector token (SERVICE_CONNECTOR_TOKEN). When present it decides.',
  },
  ConnectorBearer: {
    type: 'http',
    scheme: 'bearer',
    description: '`Authorization: Bearer <connector token>`, checked when X-Connector-Token is absent.',
  },
};

/** The security requirement of every connector operation: the connector token, not the API key. */
export const CONNECTOR_SECURITY: oas31.SecurityRequirementObject[] = [
  { ConnectorToken: [] },
  { ConnectorBearer: [] },
];

// ---- examples ----

const NODE = 'hello-agent';
const AT = '2026-11-22T05:40:01.100Z';
const health = {
  consecutive_failures: 0,
  healthy_since: '2026-11-22T05:33:40.000Z',
  last_check_at: AT,
  last_check_ok: true,
  last_check_status_code: 200,
  last_check_error: null,
  last_check_duration_ms: 3.2,
  heartbeat_stale: false,
  custom: null,
};
const version = (v: string, weight: number, share: number) => ({
  node_id: NODE,
  version: v,
  traffic_weight: weight,
  traffic_share: share,
  routable: weight > 0,
  status: 'ready',
  status_reason: 'agent_reported',
  status_changed_at: '2026-11-22T05:33:28.004Z',
  admin_state: 'active',
  base_url: v === '1.0.0' ? 'http://127.0.0.1:8001' : 'http://127.0.0.1:8002',
  last_heartbeat: AT,
  registered_at: '2026-11-22T05:33:27.826Z',
  updated_at: AT,
  functions: [`${NODE}.summarize`, `${NODE}.skill:word_count`],
  health,
});
const summary = {
  id: `${NODE}.summarize`,
  type: 'reasoner',
  name: 'summarize',
  node_id: NODE,
  group_id: NODE,
  description: 'Summarises text',
  tags: ['nlp'],
  status: 'ready',
  routable: true,
  versions: ['1.0.0', '1.1.0'],
  total_weight: 100,
  routable_weight: 100,
};

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

const capabilityDetail = (capability: string, endpoint: string) =>
  `This token lacks the capability ${capability}, needed for ${endpoint} (this deployment grants: reasoners:read).`;

/** The problems every connector operation may answer: disabled, token, and its capability. */
function guardCases(capability: ConnectorCapability | null, endpoint = ''): ProblemCase[] {
  return [
    {
      code: 'service_unavailable',
      when: 'The connector API is disabled: SERVICE_CONNECTOR_TOKEN is not set.',
      detail:
        'The connector API is disabled on this deployment: SERVICE_CONNECTOR_TOKEN (connector.token) is not set.',
    },
    {
      code: 'unauthorized',
      when: 'The connector token is missing or wrong (the API key does not count); the answer carries `WWW-Authenticate: Bearer`.',
      detail: 'This endpoint needs the connector token.',
    },
    ...(capability
      ? [
          {
            code: 'forbidden' as const,
            when: `The deployment does not grant \`${capability}\` (connector.capabilities); \`detail\` and \`capability\` name it.`,
            detail: capabilityDetail(capability, endpoint),
            extensions: { capability },
          },
        ]
      : []),
  ];
}

const impossibleId: ProblemCase = {
  code: 'not_found',
  when: 'The id could never exist (not a node id or function target, e.g. `../x`), or the version is over 100 characters.',
  detail:
    'No node or reasoner "../x" can exist: use a node id, <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>.',
};
const unknownNode: ProblemCase = {
  code: 'not_found',
  when: 'No such node, function or version is registered.',
  detail: `"${NODE}" has no version "9.9.9" (its versions: 1.0.0, 1.1.0).`,
};

const MiB = CONNECTOR_ANSWER_BYTES / (1024 * 1024);

const CacheHeader = z.object({
  'X-Connector-Cache': z.enum(['hit', 'miss']).meta({ description: 'Whether the page came from the cache.' }),
});

/** What the list descriptions say about paging, once. */
const pagingRule = `At most \`limit\` entries and ${MiB} MiB a page (a page ends before the entry that would pass it, and always holds one): continue with \`cursor=next_cursor\` until it is null. Pages are keyed by the last entry, not an offset, so an entry registered between two requests is listed once, on a later page when it sorts after the cursor, and never shifts others onto two pages; \`total\` counts the whole list as it is now. Answers are cached per page (\`X-Connector-Cache: hit\` or \`miss\`, \`connector.cache_ttl\`), and every node change clears the cache on every replica.`;

const badPage = (max: number): ProblemCase => ({
  code: 'invalid_request',
  when: `limit is not a whole number from 1 to ${max}, or cursor is not a \`next_cursor\` of this list.`,
  detail: `The query is invalid: limit: must be a whole number from 1 to ${max} (got "0")`,
  extensions: { errors: [{ field: 'limit', message: `must be a whole number from 1 to ${max} (got "0")` }] },
});

const IdParam = z.string().meta({
  description:
    'A node id (`hello-agent`: every version of the node) or a function target (`hello-agent.summarize`, `hello-agent.skill:word_count`: the versions serving it). Weights belong to the node version either way.',
  example: NODE,
});
const VersionParam = z
  .string()
  .meta({ description: 'The version, as the agent registered it.', example: '1.1.0' });

/** The connector operations under one prefix; operation ids carry `idPrefix` to stay unique. */
function pathsFor(prefix: string, idPrefix: string): ZodOpenApiPathsObject {
  const op = (
    name: string,
    capability: ConnectorCapability | null,
    operation: Omit<ZodOpenApiOperationObject, 'operationId' | 'tags' | 'security' | 'responses'> & {
      ok: Record<string, unknown>;
      problems?: ProblemCase[];
      path: string;
    },
    endpoint: [string, string],
  ): ZodOpenApiOperationObject => {
    const { ok, problems = [], path, ...rest } = operation;
    const needs = capability
      ? `Needs the connector token with \`${capability}\`.`
      : 'Needs the connector token (no capability).';
    return {
      ...rest,
      description: `${rest.description ?? ''} ${needs}`.trim(),
      operationId: `${idPrefix}${name}`,
      tags: ['Connector'],
      security: CONNECTOR_SECURITY,
      responses: {
        ...(ok as ZodOpenApiOperationObject['responses']),
        ...problemResponses(`${prefix}${path}`, [
          ...problems,
          ...guardCases(capability, `${endpoint[0]} ${prefix}${endpoint[1]}`),
        ]),
      },
    };
  };
  const versionPath = z.object({ id: IdParam, version: VersionParam });

  return {
    [`${prefix}/manifest`]: {
      get: op(
        'Manifest',
        null,
        {
          path: '/manifest',
          summary: 'What this connector offers and what the token may do',
          description:
            'The service and its version, every connector endpoint with the capability it needs and whether this deployment grants it, and the granted capabilities.',
          ok: {
            '200': {
              description: 'The manifest.',
              ...json(ManifestSchema, {
                service: 'switchyard-control-plane',
                version: '0.1.0',
                api_version: 'v1',
                base_path: prefix,
                capabilities: ['reasoners:read', 'versions:read', 'versions:write', 'restart'],
                endpoints: [
                  { method: 'GET', path: `${prefix}/reasoners`, capability: 'reasoners:read', enabled: true },
                  {
                    method: 'PUT',
                    path: `${prefix}/reasoners/:id/versions/:version/weight`,
                    capability: 'versions:write',
                    enabled: true,
                  },
                ],
              }),
            },
          },
        },
        ['GET', '/manifest'],
      ),
    },
    [`${prefix}/reasoners`]: {
      get: op(
        'ListReasoners',
        'reasoners:read',
        {
          path: '/reasoners',
          summary: 'Every reasoner and skill of every node, a page at a time',
          description: `One record per function (reasoners and skills, \`type\` says which) with the versions serving it; schemas are left out (GET one for them). By node id, reasoners before skills, then name. ${pagingRule}`,
          requestParams: { query: ReasonerListQuerySchema },
          ok: {
            '200': {
              description: 'One page of functions.',
              headers: CacheHeader,
              ...json(ReasonerPageSchema, {
                total: 2,
                reasoners: [summary],
                next_cursor: encodeFunctionCursor({
                  nodeId: NODE,
                  type: 'reasoner',
                  name: 'summarize',
                  id: `${NODE}.summarize`,
                }),
              }),
            },
          },
          problems: [badPage(REASONER_LIST_MAX_LIMIT)],
        },
        ['GET', '/reasoners'],
      ),
    },
    [`${prefix}/reasoners/{id}`]: {
      get: op(
        'GetReasoner',
        'reasoners:read',
        {
          path: `/reasoners/${NODE}.summarize`,
          summary: 'One reasoner or skill, with its schemas',
          requestParams: {
            path: z.object({
              id: z.string().meta({
                description: 'A function target: `<node_id>.<reasoner_id>` or `<node_id>.skill:<skill_id>`.',
                example: `${NODE}.summarize`,
              }),
            }),
          },
          ok: {
            '200': {
              description: 'The function.',
              ...json(ReasonerSchema, {
                ...summary,
                input_schema: { type: 'object', properties: { text: { type: 'string' } } },
                output_schema: { type: 'object' },
                examples: [],
                described_by_version: '1.1.0',
              }),
            },
          },
          problems: [
            {
              code: 'not_found',
              when: 'No node or function has this id, or the id could never be a function target.',
              detail: `Node "${NODE}" has no reasoner "translate" (its functions: ${NODE}.summarize).`,
            },
          ],
        },
        ['GET', '/reasoners/:id'],
      ),
    },
    [`${prefix}/groups`]: {
      get: op(
        'ListGroups',
        'reasoners:read',
        {
          path: '/groups',
          summary: 'Every group (one per node id), a page at a time',
          description: `By node id. ${pagingRule}`,
          requestParams: { query: GroupListQuerySchema },
          ok: {
            '200': {
              description: 'One page of groups.',
              headers: CacheHeader,
              ...json(GroupPageSchema, {
                total: 1,
                next_cursor: null,
                groups: [
                  {
                    id: NODE,
                    node_id: NODE,
                    status: 'ready',
                    routable: true,
                    total_weight: 200,
                    routable_weight: 200,
                    functions: [`${NODE}.summarize`],
                    versions: [
                      {
                        version: '1.0.0',
                        status: 'ready',
                        admin_state: 'active',
                        routable: true,
                        traffic_weight: 100,
                        traffic_share: 0.5,
                        last_heartbeat: AT,
                        functions: [`${NODE}.summarize`],
                      },
                    ],
                  },
                ],
              }),
            },
          },
          problems: [badPage(GROUP_LIST_MAX_LIMIT)],
        },
        ['GET', '/groups'],
      ),
    },
    [`${prefix}/groups/{groupId}`]: {
      get: op(
        'GetGroup',
        'reasoners:read',
        {
          path: `/groups/${NODE}`,
          summary: 'One group: a node id with all its versions',
          requestParams: {
            path: z.object({ groupId: z.string().meta({ description: 'The node id.', example: NODE }) }),
          },
          ok: {
            '200': {
              description: 'The group.',
              ...json(GroupSchema, {
                id: NODE,
                node_id: NODE,
                status: 'ready',
                routable: true,
                total_weight: 100,
                routable_weight: 100,
                functions: [`${NODE}.summarize`],
                versions: [],
              }),
            },
          },
          problems: [
            {
              code: 'not_found',
              when: 'No node has this id (or it could never be one).',
              detail: `No node "${NODE}" is registered. List what is with GET /connector/groups.`,
            },
          ],
        },
        ['GET', '/groups/:groupId'],
      ),
    },
    [`${prefix}/reasoners/{id}/versions`]: {
      get: op(
        'ListVersions',
        'versions:read',
        {
          path: `/reasoners/${NODE}/versions`,
          summary: 'The versions of a node or function, with weights and health',
          requestParams: { path: z.object({ id: IdParam }) },
          ok: {
            '200': {
              description: 'The versions, oldest registration first.',
              ...json(VersionListSchema, {
                id: NODE,
                type: 'node',
                node_id: NODE,
                total_weight: 100,
                routable_weight: 100,
                versions: [version('1.0.0', 90, 0.9), version('1.1.0', 10, 0.1)],
              }),
            },
          },
          problems: [impossibleId, unknownNode],
        },
        ['GET', '/reasoners/:id/versions'],
      ),
    },
    [`${prefix}/reasoners/{id}/versions/{version}`]: {
      get: op(
        'GetVersion',
        'versions:read',
        {
          path: `/reasoners/${NODE}/versions/1.1.0`,
          summary: 'One version, with its weight and health',
          requestParams: { path: versionPath },
          ok: { '200': { description: 'The version.', ...json(VersionSchema, version('1.1.0', 10, 0.1)) } },
          problems: [impossibleId, unknownNode],
        },
        ['GET', '/reasoners/:id/versions/:version'],
      ),
    },
    [`${prefix}/reasoners/{id}/versions/{version}/weight`]: {
      put: op(
        'SetVersionWeight',
        'versions:write',
        {
          path: `/reasoners/${NODE}/versions/1.1.0/weight`,
          summary: "Set a version's traffic weight",
          description: `New executions of the node are split among its routable versions in proportion to their weights, from the moment this answers, on every replica. The weight belongs to the node version, so it applies to every function of it. 0 stops new traffic; running executions are never moved. Body at most ${WEIGHT_BODY_LIMIT} bytes.`,
          requestParams: { path: versionPath },
          requestBody: {
            required: true,
            content: { 'application/json': { schema: WeightBodySchema, example: { weight: 10 } } },
          },
          ok: {
            '200': {
              description: 'The version as it now is.',
              ...json(VersionSchema, version('1.1.0', 10, 0.1)),
            },
          },
          problems: [
            impossibleId,
            unknownNode,
            ...jsonBodyProblems(WEIGHT_BODY_LIMIT, {
              code: 'invalid_request',
              when: `weight is missing, not a whole number from 0 to ${MAX_TRAFFIC_WEIGHT}, or the body has other members.`,
              detail: `The body is invalid: weight: must be a whole number from 0 to ${MAX_TRAFFIC_WEIGHT}`,
              extensions: {
                errors: [
                  { field: 'weight', message: `must be a whole number from 0 to ${MAX_TRAFFIC_WEIGHT}` },
                ],
              },
            }),
          ],
        },
        ['PUT', '/reasoners/:id/versions/:version/weight'],
      ),
    },
    [`${prefix}/reasoners/{id}/versions/{version}/restart`]: {
      post: op(
        'RestartVersion',
        'restart',
        {
          path: `/reasoners/${NODE}/versions/1.1.0/restart`,
          summary: 'Ask a version to restart',
          description:
            'POSTs `{ node_id, version, reason }` to `{base_url}/_internal/restart` on the agent (with X-API-Key when the control plane has one) and waits for its answer (node_health.check_timeout, 5 s). On a 2xx the version, if active, is taken out of routing (`starting`, reason `started`) until its next `ready` heartbeat or healthy probe. No body is read.',
          requestParams: { path: versionPath },
          ok: {
            '202': {
              description: 'The agent accepted the restart.',
              ...json(RestartSchema, {
                node_id: NODE,
                version: '1.1.0',
                accepted: true,
                agent_status: 202,
                status: 'starting',
                status_reason: 'started',
                admin_state: 'active',
              }),
            },
          },
          problems: [
            impossibleId,
            unknownNode,
            {
              code: 'conflict',
              when: 'The agent does not implement restarts: it answered 404, 405 or 501. Nothing changed.',
              detail: `The agent of ${NODE}@1.1.0 does not support restarts: POST {base_url}/_internal/restart answered 404.`,
              extensions: { agent_status: 404 },
            },
            {
              code: 'upstream_unavailable',
              when: 'The agent could not be reached, or answered another error. Nothing changed.',
              detail: `Could not reach the agent of ${NODE}@1.1.0 at its base_url: ECONNREFUSED.`,
              extensions: { agent_status: null },
            },
            {
              code: 'upstream_timeout',
              when: 'The agent did not answer within the timeout. Nothing changed here.',
              detail: `The agent of ${NODE}@1.1.0 did not answer the restart request within 5000 ms.`,
            },
          ],
        },
        ['POST', '/reasoners/:id/versions/:version/restart'],
      ),
    },
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * The stored-configuration operations as the connector serves them: the config-store feature
 * describes them with the token and capability; the guard also answers 503 while the connector
 * is disabled, which is added here (next to a 503 of the operation's own, if it has one).
 */
function configOperations(prefix: string): ZodOpenApiPathsObject {
  const paths = configStoreOpenApi({ prefix: `${prefix}/configs`, security: 'connector' });
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const disabled = problemResponses(path, guardCases(null).slice(0, 1))['503'] as oas31.ResponseObject;
      const own = operation.responses['503'] as oas31.ResponseObject | undefined;
      if (!own) {
        operation.responses = { ...operation.responses, '503': disabled };
        continue;
      }
      const ownContent = own.content?.['application/problem+json'];
      const added = Object.values(disabled.content?.['application/problem+json']?.examples ?? {});
      operation.responses = {
        ...operation.responses,
        '503': {
          ...own,
          description: `${own.description} ${disabled.description}`,
          content: {
            ...own.content,
            'application/problem+json': {
              ...ownContent,
              examples: { ...ownContent?.examples, connector_disabled: added[0]! },
            },
          },
        },
      };
    }
  }
  return paths;
}

/**
 * Every connector operation, under /connector and under /api/v1/connector, with the stored
 * configuration operations the connector mounts under `<prefix>/configs`.
 */
export const connectorOpenApi: ZodOpenApiPathsObject = Object.assign(
  {},
  ...CONNECTOR_PREFIXES.flatMap((prefix) => [
    pathsFor(prefix, prefix === '/connector' ? 'connector' : 'apiConnector'),
    configOperations(prefix),
  ]),
);
