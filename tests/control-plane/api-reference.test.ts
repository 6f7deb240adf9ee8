/**
 * Every operation of the control plane's OpenAPI document is named in the API reference
 * (content/) with its method and path, so a reader who searches the docs for an endpoint finds
 * it, and an endpoint added to the control plane without a word in the docs fails here. Paths
 * match whatever their parameters are called there (`{id}` and `:id` alike). The pages generated
 * from the OpenAPI documents do not count (they name everything by construction); they are held
 * to the documents instead: a committed page that differs from what they give now fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlPlaneOpenApi } from '@switchyard/control-plane/openapi';
import { describe, expect, it } from 'vitest';
import { REFERENCE_COMMAND, referencePages } from '../../scripts/api-reference/reference-pages.ts';

const CONTENT = fileURLToPath(new URL('../../content/', import.meta.url));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const METHOD = 'GET|POST|PUT|PATCH|DELETE';

/** A path with every parameter written `{}`, whatever its name or style. */
function shape(path: string): string {
  return path.replace(/\{[^}/]+\}|:[A-Za-z_][A-Za-z0-9_]*/g, '{}');
}

/**
 * The operations the reference names: `METHOD /path` in headings and prose, and in tables a row
 * whose first cell is the method (or several: `GET, PUT, DELETE`) names every path in the row
 * (a path and where else it is served).
 */
function namedOperations(markdown: string): Set<string> {
  const named = new Set<string>();
  const mention = new RegExp(
    `\\b((?:${METHOD})(?:, (?:${METHOD}))*)\\s*(?:\\|\\s*)?\`?(/[^\\s\`|)?#]+)`,
    'g',
  );
  for (const [, methods, path] of markdown.matchAll(mention)) {
    for (const method of methods!.split(', ')) named.add(`${method} ${shape(path!.replace(/[.,:;]+$/, ''))}`);
  }
  const row = new RegExp(`^\\|\\s*((?:${METHOD})(?:, (?:${METHOD}))*)\\s*\\|(.*)$`, 'gm');
  for (const [, methods, cells] of markdown.matchAll(row)) {
    for (const [, path] of cells!.matchAll(/`(\/[^`\s]+)`/g)) {
      for (const method of methods!.split(', ')) named.add(`${method} ${shape(path!)}`);
    }
  }
  return named;
}

describe('the API reference against the OpenAPI document', () => {
  const generated = referencePages();
  const markdown = readdirSync(CONTENT, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.md'))
    .filter((file) => !generated.some((page) => page.file === `content/${file}`))
    .map((file) => readFileSync(join(CONTENT, file), 'utf8'))
    .join('\n');
  const named = namedOperations(markdown);
  const operations = Object.entries(controlPlaneOpenApi().paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item?.[method]).map((method) => `${method.toUpperCase()} ${shape(path)}`),
  );

  it('reads operations the way the pages write them', () => {
    expect([
      ...namedOperations(
        '## GET /connector/reasoners/:id\n| GET, PUT | `/configs/{config_name}` | `/api/v1/configs/{name}` |\nsee `POST /api/v1/configs/reload`.',
      ),
    ]).toEqual([
      'GET /connector/reasoners/{}',
      'GET /configs/{}',
      'PUT /configs/{}',
      'POST /api/v1/configs/reload',
      'GET /api/v1/configs/{}',
      'PUT /api/v1/configs/{}',
    ]);
  });

  it('names every operation of the control plane with its method and path', () => {
    expect(operations.length).toBeGreaterThan(100);
    expect(operations.filter((operation) => !named.has(operation))).toEqual([]);
  });

  it('has generated reference pages that match the OpenAPI documents', () => {
    expect(generated.map((page) => page.file)).toHaveLength(2);
    for (const page of generated) {
      const committed = readFileSync(join(CONTENT, '..', page.file), 'utf8');
      expect(committed === page.text, `${page.file} is stale: run \`${REFERENCE_COMMAND}\``).toBe(true);
    }
  });
});
