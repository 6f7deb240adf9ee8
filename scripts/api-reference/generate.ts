// Rewrites the generated API reference pages from the OpenAPI documents: `npm run reference`
// after changing a route's schema (a test fails until the committed pages match).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { referencePages } from './reference-pages.ts';

const root = join(__dirname, '..', '..');
for (const page of referencePages()) {
  writeFileSync(join(root, page.file), page.text);
  process.stdout.write(`wrote ${page.file}\n`);
}
