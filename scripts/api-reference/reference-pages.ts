/**
 * The two generated API reference pages: the control plane's and the docs site's, each rendered
 * from the OpenAPI document its server publishes. `generate.ts` writes them; a test in
 * tests/control-plane/api-reference.test.ts fails when a committed page differs from what the
 * documents give now.
 */
import { controlPlaneOpenApi } from '@switchyard/control-plane/openapi';
import { createOpenApiDocument as docsSiteOpenApi } from '../../apps/docs/src/lib/openapi.ts';
import { renderReference } from './render-openapi.ts';

export const REFERENCE_COMMAND = 'npm run reference';

/** Where the docs site's own document says it is served; the page names paths only. */
const DOCS_SITE = 'https://docs.example.com';

export interface GeneratedPage {
  /** Relative to the repository root. */
  file: string;
  text: string;
}

export function referencePages(): GeneratedPage[] {
  return [
    {
      file: 'content/reference/control-plane-http-api.md',
      text: renderReference(controlPlaneOpenApi() as never, {
        title: 'Control plane HTTP API reference',
        description:
          "Every operation of the control plane's HTTP API with its parameters, request fields and responses, generated from the OpenAPI document the server publishes.",
        keywords: ['http api', 'endpoints', 'operations', 'parameters', 'status codes', 'openapi'],
        order: 5,
        intro:
          "Every operation the control plane serves, rendered from its [OpenAPI document](/docs/api/openapi) (`GET /api/v1/openapi.json`), which is generated from the schemas the routes validate with. The API pages explain each group with examples; this page is the complete list. Operations that need credentials take the API key as `X-API-Key`, `Authorization: Bearer` or `?api_key=` ([Authentication](/docs/concepts/authentication)); the connector's take its token ([Connector API](/docs/api/connector)). Every error is a [problem document](/docs/reference/errors): a `401 unauthorized` when the API key is set and missing or wrong, and `500 internal_error` for anything unexpected, which the tables below leave out.",
        command: REFERENCE_COMMAND,
        credentials: {
          ApiKeyHeader: 'the API key',
          BearerToken: 'the API key',
          ApiKeyQuery: 'the API key',
          ConnectorToken: 'the connector token',
          ConnectorBearer: 'the connector token',
        },
        commonResponses: (status, description) =>
          status === 'default' ||
          (status === '401' && description.startsWith('`unauthorized`: An API key is set')),
      }),
    },
    {
      file: 'content/reference/docs-site-http-api.md',
      text: renderReference(docsSiteOpenApi(DOCS_SITE) as never, {
        title: 'Docs site HTTP API reference',
        description:
          "Every operation of the documentation site's API (search, topics, page, run shares) with its parameters, fields and responses, generated from the site's OpenAPI document.",
        keywords: ['site api', 'search api', 'endpoints', 'parameters', 'status codes', 'openapi'],
        order: 6,
        intro:
          "Every operation of this site's API, rendered from its OpenAPI document at [`/openapi.json`](/openapi.json). The [Docs site API](/docs/api/site-api) page explains it with examples and its rate limits; errors are [problem documents](/docs/reference/errors).",
        command: REFERENCE_COMMAND,
        credentials: {},
        commonResponses: (status) => status === 'default',
      }),
    },
  ];
}
