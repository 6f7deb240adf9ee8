// Regenerates src/schema.d.ts from the control plane's OpenAPI document:
// `npm run generate -w @switchyard/client` after changing any route's schema.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { generateSchema, SCHEMA_FILE } from './schema-source.ts';

const target = fileURLToPath(new URL(`../${SCHEMA_FILE}`, import.meta.url));
await writeFile(target, await generateSchema());
process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
