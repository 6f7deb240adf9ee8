import { ProblemError } from '@switchyard/shared';
import type { CallerContext } from '../../platform/http/context-headers.ts';

/** The memory scopes (content/concepts/memory.md), most specific first. */
export const SCOPES = ['workflow', 'session', 'actor', 'global'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scope id of the global scope: there is one global scope. */
export const GLOBAL_SCOPE_ID = 'global';

/** One namespace of memory: a scope and its id (`workflow` + `wf_9`). */
export interface ScopeRef {
  scope: Scope;
  scopeId: string;
}

/** What a request says about scopes: its context headers and an optional explicit choice. */
export interface ScopeRequest {
  context: Pick<CallerContext, 'workflowId' | 'sessionId' | 'actorId'>;
  /** `scope` from the body or query. */
  scope?: Scope;
  /** `scope_id` from the body or query: names the scope's id instead of its header. */
  scopeId?: string;
}

const HEADER: Record<Exclude<Scope, 'global'>, string> = {
  workflow: 'X-Workflow-ID',
  session: 'X-Session-ID',
  actor: 'X-Actor-ID',
};

function headerId(request: ScopeRequest, scope: Scope): string | undefined {
  if (scope === 'global') return GLOBAL_SCOPE_ID;
  const { context } = request;
  return scope === 'workflow'
    ? context.workflowId
    : scope === 'session'
      ? context.sessionId
      : context.actorId;
}

function invalid(detail: string, field: string, message: string): ProblemError {
  return new ProblemError('invalid_request', detail, { extensions: { errors: [{ field, message }] } });
}

/**
 * The id of an explicitly named scope: `scope_id` when given, else the scope's header. Undefined
 * when neither names it. `scope_id` without `scope`, or a global `scope_id` other than `global`,
 * is a 400.
 */
function explicitId(request: ScopeRequest): string | undefined {
  const { scope, scopeId } = request;
  if (scope === undefined) {
    if (scopeId !== undefined) throw invalid('scope_id needs scope.', 'scope_id', 'give scope as well');
    return undefined;
  }
  if (scope === 'global') {
    if (scopeId !== undefined && scopeId !== GLOBAL_SCOPE_ID) {
      throw invalid('The global scope has one id: "global".', 'scope_id', 'must be "global" or absent');
    }
    return GLOBAL_SCOPE_ID;
  }
  return scopeId ?? headerId(request, scope);
}

/** Why an explicitly named scope has no id, for errors: which header or field would name it. */
export function missingIdDetail(scope: Scope): string {
  return scope === 'global'
    ? ''
    : `The ${scope} scope needs its id: send the ${HEADER[scope]} header or scope_id.`;
}

/**
 * Where a write (set, delete, vector store and delete) goes: the named scope, or the most
 * specific scope the headers name (workflow, session, actor), else global. A named scope without
 * an id is a 400: there is nowhere to write.
 */
export function writeScope(request: ScopeRequest): ScopeRef {
  if (request.scope !== undefined) {
    const scopeId = explicitId(request);
    if (scopeId === undefined) throw invalid(missingIdDetail(request.scope), 'scope', 'has no id');
    return { scope: request.scope, scopeId };
  }
  explicitId(request);
  for (const scope of SCOPES) {
    const scopeId = headerId(request, scope);
    if (scopeId !== undefined) return { scope, scopeId };
  }
  return { scope: 'global', scopeId: GLOBAL_SCOPE_ID };
}

/**
 * Where a read (get, vector get, list, search) looks, in order: the named scope alone, or every
 * scope the headers name from the most specific to global. A named scope without an id yields no
 * scope at all; callers decide what that means (a get answers 404, which SDKs that walk the scopes
 * themselves read as "missing"; list and search refuse it with 400).
 */
export function readScopes(request: ScopeRequest): ScopeRef[] {
  if (request.scope !== undefined) {
    const scopeId = explicitId(request);
    return scopeId === undefined ? [] : [{ scope: request.scope, scopeId }];
  }
  explicitId(request);
  const found: ScopeRef[] = [];
  for (const scope of SCOPES) {
    const scopeId = headerId(request, scope);
    if (scopeId !== undefined) found.push({ scope, scopeId });
  }
  return found;
}

/** readScopes for list and search: a named scope without an id is a 400, not an empty answer. */
export function requireReadScopes(request: ScopeRequest): ScopeRef[] {
  const scopes = readScopes(request);
  if (scopes.length === 0 && request.scope !== undefined) {
    throw invalid(missingIdDetail(request.scope), 'scope', 'has no id');
  }
  return scopes;
}

/**
 * The 404 of a get that found nothing: which scopes it searched, or which id the named scope
 * lacked. `what` names the thing (`memory key`, `vector`).
 */
export function notFoundIn(
  what: string,
  key: string,
  request: ScopeRequest,
  searched: ScopeRef[],
): ProblemError {
  const names = searched.map((ref) => ref.scope);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names.join('');
  const detail =
    searched.length === 0 && request.scope !== undefined
      ? `No ${what} "${key}": ${missingIdDetail(request.scope)}`
      : `No ${what} "${key}" in the ${list} scope${searched.length === 1 ? '' : 's'}.`;
  return new ProblemError('not_found', detail, {
    resolution: `Store the ${what} first, or check the scope: the context headers (or scope and scope_id) say where a get looks.`,
  });
}
