import { openApiSchemas, pointerToken as token } from '@switchyard/shared/testing';
import { expect } from 'vitest';

type Json = Record<string, any>;

/** A response as the tests see it: what was asked and what came back. */
export interface RecordedResponse {
  method: string;
  /** The request path, without the query string. */
  path: string;
  status: number;
  /** The Content-Type header; null when the answer had none. */
  contentType: string | null;
  /** The parsed JSON body, or the text of any other body. */
  body: unknown;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `application/json; charset=utf-8` → `application/json`. */
const mediaType = (value: string) => value.split(';')[0]!.trim().toLowerCase();

/** A path template (`/api/v1/nodes/{node_id}`) as a matcher of request paths. */
function templateMatcher(template: string): RegExp {
  const pattern = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${pattern}$`, 'i');
}

/**
 * Validates real answers of the control plane against its published OpenAPI 3.1 document with
 * Ajv (draft 2020-12, the dialect of OpenAPI 3.1, plus the standard formats). The document is
 * registered whole, so its `#/components/...` references resolve as a client's validator would.
 */
export function createOpenApiValidator(document: Json) {
  const schemas = openApiSchemas(document);
  const templates = Object.keys(document.paths ?? {})
    .map((template) => ({
      template,
      matcher: templateMatcher(template),
      params: template.split('{').length - 1,
    }))
    // Literal segments win over parameters: /nodes/status/bulk before /nodes/{node_id}/...
    .sort((a, b) => a.params - b.params);

  function check(pointer: string, value: unknown): string[] {
    const validate = schemas.at(pointer);
    if (validate(value)) return [];
    return schemas.problems(validate).map((line) => line.trim());
  }

  /** The template and operation the document declares for a request, if any. */
  function operationFor(method: string, path: string): { template: string; operation: Json } | undefined {
    const lower = method.toLowerCase();
    for (const { template, matcher } of templates) {
      const operation = document.paths[template]?.[lower];
      if (operation && matcher.test(path)) return { template, operation };
    }
    return undefined;
  }

  /**
   * What is wrong with a response according to the document: an undocumented operation, status
   * or content type, or a body that does not match its schema. Empty when it matches.
   */
  function problemsOf(response: RecordedResponse): string[] {
    if (response.method.toUpperCase() === 'HEAD') {
      // HEAD is answered for every GET operation with the GET's status and headers, and no body.
      const get = operationFor('GET', response.path);
      if (get && response.status < 400 && !get.operation.responses?.[String(response.status)]) {
        return [`HEAD ${get.template} → ${response.status}: status not documented for GET`];
      }
      if (get && response.status < 400) return [];
    }
    const found = operationFor(response.method, response.path);
    if (!found) {
      // Unknown paths (404) and known paths with another method (405) are answered by the router
      // fallback with a problem document, as the document's description says; they have no operation.
      const known = templates.some(({ matcher }) => matcher.test(response.path));
      const fallback = known ? 405 : 404;
      if (response.status !== fallback) {
        return [
          `${response.method} ${response.path} is not in the OpenAPI document (answered ${response.status})`,
        ];
      }
      if (mediaType(response.contentType ?? '') !== 'application/problem+json') {
        return [`${response.method} ${response.path} → ${fallback}: not a problem document`];
      }
      return check('/components/schemas/Problem', response.body).map(
        (p) => `${response.method} ${response.path}: ${p}`,
      );
    }
    const { template, operation } = found;
    const where = `${response.method} ${template} → ${response.status}`;
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find(
      (key) => operation.responses?.[key],
    );
    if (!statusKey) return [`${where}: status not documented`];
    const declared = operation.responses[statusKey];
    const content: Json = declared.content ?? {};
    if (Object.keys(content).length === 0) {
      return response.body === undefined || response.body === '' ? [] : [`${where}: documents no body`];
    }
    if (!response.contentType) return [`${where}: answered without a Content-Type`];
    const key = Object.keys(content).find((k) => mediaType(k) === mediaType(response.contentType!));
    if (!key)
      return [`${where}: content type ${response.contentType} not documented (${Object.keys(content)})`];
    const pointer = [
      '',
      'paths',
      template,
      response.method.toLowerCase(),
      'responses',
      statusKey,
      'content',
      key,
      'schema',
    ]
      .map(token)
      .join('/');
    return check(pointer, response.body).map((problem) => `${where} ${mediaType(key)}: ${problem}`);
  }

  return {
    document,
    operationFor,
    problemsOf,
    /** Problems of any value against the schema at a JSON Pointer into the document. */
    check,
    /** Fails the test, naming each problem, unless the response matches the document. */
    expectMatches(response: RecordedResponse): void {
      expect(problemsOf(response), `${response.method} ${response.path} answered ${response.status}`).toEqual(
        [],
      );
    },
  };
}

export type OpenApiValidator = ReturnType<typeof createOpenApiValidator>;

const validators = new Map<string, Promise<OpenApiValidator>>();

/** The validator of the document a running control plane serves at /api/v1/openapi.json. */
export function openApiValidatorOf(base: string): Promise<OpenApiValidator> {
  let validator = validators.get(base);
  if (!validator) {
    validator = fetch(`${base}/api/v1/openapi.json`).then(async (response) => {
      if (response.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
      return createOpenApiValidator((await response.json()) as Json);
    });
    validators.set(base, validator);
  }
  return validator;
}

/**
 * Checks a response of `call()` (test/helpers/control-plane.ts) against the document the server
 * publishes: `await expectDocumented(base, 'GET', '/api/v1/health', response)`.
 */
export async function expectDocumented(
  base: string,
  method: string,
  path: string,
  response: { status: number; headers: Headers; body: unknown },
): Promise<void> {
  (await openApiValidatorOf(base)).expectMatches({
    method,
    path: path.split('?')[0]!,
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: response.body,
  });
}
