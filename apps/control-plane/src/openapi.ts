import type { oas31 } from 'zod-openapi';
import { approvalsOpenApi } from './modules/approvals/index.ts';
import { configStoreOpenApi } from './modules/config-store/index.ts';
import { CONNECTOR_SECURITY_SCHEMES, connectorOpenApi } from './modules/connector/index.ts';
import { discoveryOpenApi } from './modules/discovery/index.ts';
import { executionEventsOpenApi, executionsOpenApi } from './modules/executions/index.ts';
import { healthOpenApi } from './modules/health/index.ts';
import { mcpOpenApi } from './modules/mcp/index.ts';
import { memoryEventsOpenApi, memoryOpenApi, vectorMemoryOpenApi } from './modules/memory/index.ts';
import { nodesOpenApi } from './modules/nodes/index.ts';
import { observabilityOpenApi } from './modules/observability/index.ts';
import { overviewOpenApi } from './modules/overview/index.ts';
import { sharesOpenApi } from './modules/shares/index.ts';
import { webhooksOpenApi } from './modules/webhooks/index.ts';
import { createOpenApiDocument } from './platform/openapi/document.ts';
import { platformOpenApi } from './platform/openapi/platform-paths.ts';
import { VERSION } from './platform/version.ts';

/**
 * The control plane's OpenAPI 3.1 document: every feature's `openapi.ts` merged with the
 * platform's shared pieces. The app serves it at /api/v1/openapi.json; `scripts/openapi.ts` prints
 * it without a database, for the typed client (packages/client) to generate its types from.
 * test/openapi.test.ts holds the routes and this list to each other.
 */
export function controlPlaneOpenApi(): oas31.OpenAPIObject {
  return createOpenApiDocument({
    version: VERSION,
    paths: [
      platformOpenApi,
      healthOpenApi,
      discoveryOpenApi,
      nodesOpenApi,
      executionsOpenApi,
      executionEventsOpenApi,
      webhooksOpenApi,
      memoryOpenApi,
      memoryEventsOpenApi,
      vectorMemoryOpenApi,
      configStoreOpenApi({ prefix: '/api/v1/configs', security: 'apiKey' }),
      observabilityOpenApi,
      connectorOpenApi,
      approvalsOpenApi,
      mcpOpenApi,
      overviewOpenApi,
      sharesOpenApi,
    ],
    securitySchemes: CONNECTOR_SECURITY_SCHEMES,
  });
}
