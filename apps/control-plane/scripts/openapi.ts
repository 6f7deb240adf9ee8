// Prints the control plane's OpenAPI document as JSON, built from the routes' schemas with no
// database or server: `npx tsx scripts/openapi.ts > openapi.json`. packages/client generates its
// types from this output (`npm run generate -w @switchyard/client`).
import { controlPlaneOpenApi } from '../src/openapi.ts';

process.stdout.write(`${JSON.stringify(controlPlaneOpenApi(), null, 2)}\n`);
