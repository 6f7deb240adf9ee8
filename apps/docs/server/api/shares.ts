import { ProblemError } from '@switchyard/shared';
import { readBody } from '../http/request-body.ts';
import { sendJson } from '../http/responses.ts';
import { RunBundleSchema } from '../shares/run-bundle.ts';
import type { ShareStore } from '../shares/share-store.ts';
import type { ApiHandler } from './api-context.ts';

/** The reply to a successful publish. */
export interface CreatedShare {
  id: string;
  url: string;
  workflow_id: string;
  title: string;
  created_at: string;
  node_count: number;
  edge_count: number;
}

/** Shares are switched off (SHARES_ENABLED=false) or their storage is not available. */
export function sharesDisabled(): ProblemError {
  return new ProblemError('service_unavailable', 'Run sharing is switched off on this deployment.', {
    resolution:
      'Publish to a deployment with sharing enabled (SHARES_ENABLED=true), or share the run bundle file.',
  });
}

function invalid(detail: string, errors: Array<{ field: string; message: string }>): ProblemError {
  return new ProblemError('invalid_request', detail, { extensions: { errors } });
}

function fieldName(path: ReadonlyArray<PropertyKey>): string {
  let name = '';
  for (const part of path) {
    if (typeof part === 'number') name += `[${part}]`;
    else name += name === '' ? String(part) : `.${String(part)}`;
  }
  return name || '(body)';
}

/**
 * POST /api/v1/shares (createRunShare): validates a run bundle, stores it and answers with its
 * permalink. `X-API-Key` may be sent by the CLI and is ignored: publishing needs no credentials.
 */
export function createShareHandler(deps: { store: ShareStore | undefined; maxBytes: number }): ApiHandler {
  return async ({ req, res, site }) => {
    if (!deps.store) {
      req.resume();
      throw sharesDisabled();
    }
    const raw = await readBody(req, deps.maxBytes);
    if (raw.length === 0) {
      throw invalid('The request body is empty; send the run bundle as JSON.', [
        { field: '(body)', message: 'required' },
      ]);
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      throw invalid('The request body is not valid JSON.', [{ field: '(body)', message: 'not valid JSON' }]);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw invalid('The request body must be a JSON object (the run bundle).', [
        { field: '(body)', message: 'expected an object' },
      ]);
    }
    const parsed = RunBundleSchema.safeParse(json);
    if (!parsed.success) {
      const errors = parsed.error.issues.slice(0, 20).map((issue) => ({
        field: fieldName(issue.path),
        message: issue.message,
      }));
      const first = errors[0]!;
      const more =
        parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more, see errors)` : '';
      throw invalid(`The run bundle is invalid at ${first.field}: ${first.message}${more}.`, errors);
    }
    const share = await deps.store.create(parsed.data);
    const url = `${site}/s/${share.id}`;
    const body: CreatedShare = {
      id: share.id,
      url,
      workflow_id: share.bundle.workflow_id,
      title: share.bundle.title,
      created_at: share.created_at,
      node_count: share.bundle.nodes.length,
      edge_count: share.bundle.edges.length,
    };
    res.setHeader('Location', url);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 201, body);
  };
}
