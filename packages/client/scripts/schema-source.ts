import { controlPlaneOpenApi } from '@switchyard/control-plane/openapi';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

/** Where the generated types live, relative to the package. */
export const SCHEMA_FILE = 'src/schema.d.ts';

/** The command that rewrites SCHEMA_FILE, as messages tell people to run it. */
export const GENERATE_COMMAND = 'npm run generate -w @switchyard/client';

/**
 * The text of src/schema.d.ts as the control plane's OpenAPI document gives it now: the document
 * is built in process from the routes' schemas (no database, no server), then turned into types
 * by openapi-typescript. One function, so `generate` and the drift test cannot disagree.
 */
export async function generateSchema(): Promise<string> {
  const document = controlPlaneOpenApi() as unknown as OpenAPI3;
  const ast = await openapiTS(document, { silent: true });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}
