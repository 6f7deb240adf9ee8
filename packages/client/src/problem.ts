import type { components } from './schema.d.ts';

/** An RFC 9457 problem document as the control plane answers every non-2xx request. */
export type Problem = components['schemas']['Problem'];

/** The problem-document members ApiProblem reads; any of them may be missing from a foreign body. */
interface ProblemFields {
  type?: unknown;
  title?: unknown;
  status?: unknown;
  detail?: unknown;
  resolution?: unknown;
  instance?: unknown;
  code?: unknown;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * A failed call. For an answer of the control plane it carries the problem document's members
 * (and the whole document as `problem`); for an answer that is not a problem document (a proxy's
 * HTML page, an empty 502) or no answer at all (status 0: the server could not be reached) it
 * carries a readable `detail` made up here, never raw JSON.
 */
export class ApiProblem extends Error {
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** URL of the page that explains the error code (`about:blank` when the answer had none). */
  readonly type: string;
  /** Short name of the error, e.g. "Unauthorized". */
  readonly title: string;
  /** What went wrong with this request, in prose. */
  readonly detail: string;
  /** What to do next, when the server said. */
  readonly resolution: string | undefined;
  /** The request path the problem is about. */
  readonly instance: string | undefined;
  /** The stable error code to branch on (`unauthorized`, `not_found`, ...); `network_error` for no answer. */
  readonly code: string | undefined;
  /** The whole problem document as answered (with extensions such as `errors`), or undefined. */
  readonly problem: Problem | undefined;

  constructor(init: {
    status: number;
    title: string;
    detail: string;
    type?: string;
    resolution?: string;
    instance?: string;
    code?: string;
    problem?: Problem;
    cause?: unknown;
  }) {
    super(`${init.title} (${init.status || 'no answer'}): ${init.detail}`, { cause: init.cause });
    this.name = 'ApiProblem';
    this.status = init.status;
    this.type = init.type ?? 'about:blank';
    this.title = init.title;
    this.detail = init.detail;
    this.resolution = init.resolution;
    this.instance = init.instance;
    this.code = init.code;
    this.problem = init.problem;
  }

  /**
   * The ApiProblem for an error answer: `body` is what openapi-fetch parsed (the JSON document,
   * or the raw text when the body was not JSON).
   */
  static fromResponse(response: Response, body: unknown): ApiProblem {
    const instance = response.url ? safePath(response.url) : undefined;
    if (isProblemLike(body)) {
      const fields = body as ProblemFields;
      return new ApiProblem({
        status: typeof fields.status === 'number' ? fields.status : response.status,
        type: text(fields.type),
        title: text(fields.title) ?? (response.statusText || 'Error'),
        detail: text(fields.detail) ?? `The server answered ${response.status}.`,
        resolution: text(fields.resolution),
        instance: text(fields.instance) ?? instance,
        code: text(fields.code),
        problem: body as Problem,
      });
    }
    // Not a problem document: say what arrived without echoing a body that may be a whole page.
    const kind = response.headers.get('content-type')?.split(';')[0] || 'no content type';
    return new ApiProblem({
      status: response.status,
      title: response.statusText || 'Error',
      detail: `The server answered ${response.status} with a body that is not a problem document (${kind}).`,
      instance,
    });
  }

  /** The ApiProblem for a request that got no answer (refused, reset, DNS, TLS). */
  static fromNetworkError(url: string, error: unknown): ApiProblem {
    const reason = describeCause(error);
    return new ApiProblem({
      status: 0,
      title: 'Network error',
      detail: `Could not reach ${url}: ${reason}.`,
      code: 'network_error',
      instance: safePath(url),
      cause: error,
    });
  }
}

function isProblemLike(body: unknown): body is ProblemFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const fields = body as ProblemFields;
  return typeof fields.title === 'string' || typeof fields.detail === 'string';
}

function safePath(url: string): string | undefined {
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/** Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, ...) is on its cause. */
function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${cause.message} (${code})` : cause.message;
  }
  return error.message;
}

/** What every openapi-fetch call resolves to: the parsed data, or the error body, and the response. */
export interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The data of a successful call of type R. */
export type DataOf<R extends FetchResult> = Exclude<R['data'], undefined>;

/**
 * The data of a successful call, or an {@link ApiProblem}: `const health = await
 * unwrap(client.GET('/api/v1/health'))`. Takes the call's promise (so a network failure also
 * becomes an ApiProblem, with status 0) or its settled result.
 */
export async function unwrap<R extends FetchResult>(result: R | Promise<R>): Promise<DataOf<R>> {
  let settled: R;
  try {
    settled = await result;
  } catch (error) {
    if (error instanceof ApiProblem) throw error;
    // An aborted call is the caller's own doing: let it through as the AbortError it is.
    if (error instanceof Error && error.name === 'AbortError') throw error;
    throw ApiProblem.fromNetworkError(requestUrlOf(error), error);
  }
  if (settled.error !== undefined || !settled.response.ok) {
    throw ApiProblem.fromResponse(settled.response, settled.error);
  }
  return settled.data as DataOf<R>;
}

/** The URL the client middleware recorded on a network failure, when it did. */
function requestUrlOf(error: unknown): string {
  const url = (error as { requestUrl?: unknown } | null)?.requestUrl;
  return typeof url === 'string' ? url : 'the control plane';
}

/**
 * One readable line for a UI about any error a call or stream can raise: an ApiProblem's title,
 * detail and resolution; another Error's message; anything else as text.
 */
export function problemMessage(error: unknown): string {
  if (error instanceof ApiProblem) {
    const status = error.status ? ` (${error.status})` : '';
    const resolution = error.resolution ? ` ${error.resolution}` : '';
    return `${error.title}${status}: ${error.detail}${resolution}`;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
