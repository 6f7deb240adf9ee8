import {
  type FieldError,
  fieldErrors,
  fieldPath,
  jsonTextDepth,
  MAX_JSON_DEPTH,
  ProblemError,
} from '@switchyard/shared';
import type { ApiHandler } from '../api/api-context.ts';
import { clientAddress } from '../http/client-address.ts';
import { readBody } from '../http/request-body.ts';
import { sendJson } from '../http/responses.ts';
import { displayTitle, RunBundleSchema } from './run-bundle.ts';
import type { ShareService } from './share-service.ts';

/** The reply to a successful publish. */
export interface CreatedShare {
  id: string;
  url: string;
  workflow_id: string;
  /** The title the page shows: the bundle's, or `Workflow {workflow_id}` when it has none. */
  title: string;
  created_at: string;
  node_count: number;
  edge_count: number;
}

/** At most this many failing fields are listed; a broken generator would otherwise list thousands. */
const MAX_LISTED_ERRORS = 20;

/** Shares are switched off (SHARES_ENABLED=false) or their storage is not available. */
export function sharesDisabled(): ProblemError {
  return new ProblemError('service_unavailable', 'Run sharing is switched off on this deployment.', {
    resolution:
      'Publish to a deployment with sharing enabled (SHARES_ENABLED=true), or share the run bundle file.',
  });
}

function invalid(detail: string, errors: FieldError[]): ProblemError {
  return new ProblemError('invalid_request', detail, { extensions: { errors } });
}

function wholeBody(message: string): FieldError[] {
  return [{ field: fieldPath([]), message }];
}

/** The bundle as JSON: refused when empty, too deeply nested, malformed or not an object. */
function parseBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) {
    throw invalid('The request body is empty; send the run bundle as JSON.', wholeBody('required'));
  }
  const text = raw.toString('utf8');
  // Checked on the text before parsing: every later step (validation, storage, the permalink
  // page) walks the value, and a bundle nested thousands deep would overflow them, or be stored
  // and then fail each time its page is rendered.
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) {
    throw invalid(
      `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`,
      wholeBody(`nested deeper than ${MAX_JSON_DEPTH} levels`),
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid('The request body is not valid JSON.', wholeBody('not valid JSON'));
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid(
      'The request body must be a JSON object (the run bundle).',
      wholeBody('expected an object'),
    );
  }
  return json as Record<string, unknown>;
}

/**
 * POST /api/v1/shares (createRunShare): validates a run bundle, stores it within the client's
 * write budget and answers with its permalink. `X-API-Key` may be sent by the CLI and is
 * ignored: publishing needs no credentials.
 */
export function createPublishHandler(deps: {
  service: ShareService | undefined;
  maxBytes: number;
  /** Proxy hops trusted to name the client in X-Forwarded-For, as for the request budget. */
  trustedProxyHops: number;
}): ApiHandler {
  return async ({ req, res, site }) => {
    if (!deps.service) {
      req.resume();
      throw sharesDisabled();
    }
    const json = parseBody(await readBody(req, deps.maxBytes));
    const parsed = RunBundleSchema.safeParse(json);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error).slice(0, MAX_LISTED_ERRORS);
      const first = errors[0]!;
      const more =
        parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more, see errors)` : '';
      throw invalid(`The run bundle is invalid at ${first.field}: ${first.message}${more}.`, errors);
    }
    const share = await deps.service.publish(parsed.data, clientAddress(req, deps.trustedProxyHops));
    const url = `${site}/s/${share.id}`;
    const body: CreatedShare = {
      id: share.id,
      url,
      workflow_id: share.bundle.workflow_id,
      title: displayTitle(share.bundle),
      created_at: share.created_at,
      node_count: share.bundle.nodes.length,
      edge_count: share.bundle.edges.length,
    };
    res.setHeader('Location', url);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 201, body);
  };
}
