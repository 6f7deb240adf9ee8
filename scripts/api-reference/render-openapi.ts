/**
 * Renders an OpenAPI 3.1 document as a markdown reference page: one section per tag, one per
 * operation with its method and path, parameters, request fields and responses, in tables a
 * reader can scan. Examples stay in the document and in the hand-written API pages; this page is
 * the complete list, generated so that it cannot drift from what the server serves.
 */

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is walked by key at any depth; typing each level would restate the specification.
type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** How deep request fields are listed (`a.b.c`); deeper structure is in the OpenAPI document. */
const FIELD_DEPTH = 3;

export interface ReferencePage {
  title: string;
  description: string;
  keywords: string[];
  order: number;
  /** The paragraph under the title: where the document is served, how to authenticate. */
  intro: string;
  /** The command that writes the page, for the note that tells editors not to edit it. */
  command: string;
  /**
   * Readable names of the security schemes (`ApiKeyHeader` → `the API key`); schemes with one
   * name read as one credential, whatever carrier the client picks.
   */
  credentials: Record<string, string>;
  /**
   * Responses every operation has and the intro explains once (`default`, a `401` of the API
   * key): left out of each table so that the table shows what is particular to the operation.
   */
  commonResponses: (status: string, description: string) => boolean;
}

/** Resolves a local `$ref` (`#/components/schemas/X`) against the document. */
function resolve(document: Json, value: Json | undefined): Json | undefined {
  let current = value;
  for (let hops = 0; current?.$ref && hops < 20; hops++) {
    const path = String(current.$ref).replace(/^#\//, '').split('/');
    current = path.reduce<Json | undefined>(
      (node, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')],
      document,
    );
  }
  return current;
}

/** A table cell: one line, pipes escaped. */
function cell(text: unknown): string {
  return String(text ?? '')
    .replace(/\s*\n\s*/g, ' ')
    .replaceAll('|', '\\|')
    .trim();
}

/** A schema's type in a few words: `string`, `integer (1–500)`, `array of object`, `"a" or "b"`. */
export function typeOf(document: Json, raw: Json | undefined, depth = 0): string {
  const schema = resolve(document, raw);
  if (!schema || depth > 4) return 'any';
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (Array.isArray(schema.enum))
    return schema.enum.map((v: unknown) => `\`${JSON.stringify(v)}\``).join(' or ');
  const union = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(union)) {
    return [...new Set(union.map((s: Json) => typeOf(document, s, depth + 1)))].join(' or ');
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1)
    return typeOf(document, schema.allOf[0], depth + 1);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return schema.properties ? 'object' : 'any';
  return types
    .map((type) => {
      if (type === 'array') return `array of ${typeOf(document, schema.items, depth + 1)}`;
      const bounds: string[] = [];
      if (type === 'integer' || type === 'number') {
        if (schema.minimum !== undefined || schema.maximum !== undefined)
          bounds.push(`${schema.minimum ?? '…'}–${schema.maximum ?? '…'}`);
      }
      if (type === 'string') {
        if (schema.format) bounds.push(schema.format);
        if (schema.maxLength !== undefined) bounds.push(`≤ ${schema.maxLength} chars`);
      }
      return bounds.length > 0 ? `${type} (${bounds.join(', ')})` : type;
    })
    .join(' or ');
}

/** Rows of a request body: each field, its nested fields as dotted names. */
function fieldRows(document: Json, raw: Json | undefined, prefix: string, depth: number): string[] {
  const schema = resolve(document, raw);
  if (!schema || depth >= FIELD_DEPTH) return [];
  const object = schema.type === 'array' ? resolve(document, schema.items) : schema;
  const properties: Json = object?.properties ?? {};
  const required = new Set<string>(object?.required ?? []);
  const itemPrefix = schema.type === 'array' ? `${prefix}[]` : prefix;
  return Object.entries(properties).flatMap(([name, property]) => {
    const field = `${itemPrefix}${itemPrefix ? '.' : ''}${name}`;
    const resolved = resolve(document, property as Json);
    const row = `| \`${field}\` | ${cell(typeOf(document, property as Json))} | ${required.has(name) ? 'yes' : 'no'} | ${cell(resolved?.description)} |`;
    return [row, ...fieldRows(document, property as Json, field, depth + 1)];
  });
}

function parametersTable(document: Json, operation: Json, shared: Json[]): string[] {
  const parameters = [...shared, ...(operation.parameters ?? [])].map((p) => resolve(document, p) as Json);
  if (parameters.length === 0) return [];
  return [
    '**Parameters**',
    '',
    '| Name | In | Type | Required | Description |',
    '|---|---|---|---|---|',
    ...parameters.map(
      (p) =>
        `| \`${p.name}\` | ${p.in} | ${cell(typeOf(document, p.schema))} | ${p.required ? 'yes' : 'no'} | ${cell(p.description ?? resolve(document, p.schema)?.description)} |`,
    ),
    '',
  ];
}

function requestBodySection(document: Json, operation: Json): string[] {
  const body = resolve(document, operation.requestBody);
  if (!body?.content) return [];
  const lines: string[] = [];
  for (const [type, media] of Object.entries<Json>(body.content)) {
    const schema = resolve(document, media.schema);
    lines.push(
      `**Request body** (\`${type}\`${body.required ? ', required' : ''})${body.description ? `: ${cell(body.description)}` : ''}`,
      '',
    );
    const rows = fieldRows(document, media.schema, '', 0);
    if (rows.length > 0) {
      lines.push('| Field | Type | Required | Description |', '|---|---|---|---|', ...rows, '');
    } else if (schema) {
      lines.push(
        `A ${typeOf(document, media.schema)}.${schema.description ? ` ${cell(schema.description)}` : ''}`,
        '',
      );
    }
  }
  return lines;
}

function responsesTable(document: Json, operation: Json, page: ReferencePage): string[] {
  const responses = Object.entries<Json>(operation.responses ?? {})
    .map(([status, raw]) => [status, resolve(document, raw) as Json] as const)
    .filter(([status, response]) => !page.commonResponses(status, String(response.description ?? '')));
  const rows = responses.map(([status, response]) => {
    const types = Object.keys(response.content ?? {});
    return `| ${status} | ${types.map((t) => `\`${t}\``).join(', ') || '(none)'} | ${cell(response.description)} |`;
  });
  return ['**Responses**', '', '| Status | Body | When |', '|---|---|---|', ...rows, ''];
}

/** Which credentials the operation needs: its own `security`, else the document's. */
function access(document: Json, operation: Json, page: ReferencePage): string {
  const security: Json[] = operation.security ?? document.security ?? [];
  if (security.length === 0 || security.some((s) => Object.keys(s).length === 0)) return 'No credentials.';
  const names = [
    ...new Set(security.flatMap((s) => Object.keys(s)).map((s) => page.credentials[s] ?? `\`${s}\``)),
  ];
  return `Needs ${names.join(' or ')}.`;
}

/** The page's markdown, front matter included. */
export function renderReference(document: Json, page: ReferencePage): string {
  // An operation served at two paths (the connector's `/connector/...` and `/api/v1/connector/...`)
  // is described once, naming both: they differ only in their ids and the paths in their examples.
  const sections = new Map<string, { tag: string; routes: string[]; operation: Json; shared: Json[] }>();
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      // Examples differ between the copies (their problem documents name the path they answer).
      const key = `${method} ${operation.summary} ${operation.description} ${Object.keys(operation.responses ?? {})}`;
      const known = sections.get(key);
      const route = `\`${method.toUpperCase()} ${path}\``;
      if (known) known.routes.push(route);
      else
        sections.set(key, {
          tag: operation.tags?.[0] ?? 'Other',
          routes: [route],
          operation,
          shared: item.parameters ?? [],
        });
    }
  }
  const byTag = new Map<string, string[]>();
  for (const { tag, routes, operation, shared } of sections.values()) {
    const section = [
      `### ${cell(operation.summary ?? routes[0]!.replaceAll('`', ''))}`,
      '',
      `${routes.join(' and ')} · ${access(document, operation, page)}${operation.deprecated ? ' **Deprecated.**' : ''}`,
      '',
      ...(operation.description ? [String(operation.description).trim(), ''] : []),
      ...parametersTable(document, operation, shared),
      ...requestBodySection(document, operation),
      ...responsesTable(document, operation, page),
    ];
    byTag.set(tag, [...(byTag.get(tag) ?? []), section.join('\n').trimEnd()]);
  }
  const tags = [...byTag.keys()].sort((a, b) => a.localeCompare(b));
  const front = [
    '---',
    `title: ${page.title}`,
    `description: ${page.description}`,
    'category: Reference',
    `keywords: [${page.keywords.join(', ')}]`,
    `order: ${page.order}`,
    // Search leads to the API pages that explain each operation; this listing restates them.
    'search: false',
    '---',
  ].join('\n');
  const body = tags.map((tag) => `## ${tag}\n\n${byTag.get(tag)!.join('\n\n')}`).join('\n\n');
  return `${front}\n\n<!-- Generated by \`${page.command}\` from the OpenAPI document; edit the schemas, not this page. -->\n\n${page.intro}\n\n${body}\n`;
}
