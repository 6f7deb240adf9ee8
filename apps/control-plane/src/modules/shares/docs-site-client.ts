import { DOCS_URL_ENV, ProblemError } from '@switchyard/shared';
import { createOutboundClient } from '../../platform/outbound/index.ts';
import { VERSION } from '../../platform/version.ts';
import { send } from '../webhooks/index.ts';
import type { RunBundle } from './run-bundle.ts';

/** Where the docs site put a published run. */
export interface PublishedRun {
  id: string;
  /** The permalink, as the docs site gave it. */
  url: string;
}

/** Publishes run bundles to the docs site. */
export interface DocsSiteClient {
  publish(bundle: RunBundle): Promise<PublishedRun>;
}

/** At most this much of what the site said is quoted in a problem. */
const QUOTED_CHARS = 500;

/** What a refusing docs site said: its problem's code and detail (or error), else its text. */
function whatItSaid(body: string | null): string {
  if (!body) return 'no body';
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const detail = typeof parsed.detail === 'string' ? parsed.detail : parsed.error;
    if (typeof detail === 'string') {
      const code = typeof parsed.code === 'string' ? `${parsed.code}: ` : '';
      return `${code}${detail}`.slice(0, QUOTED_CHARS);
    }
  } catch {
    // Not JSON: quoted as text below.
  }
  return body.replace(/\s+/g, ' ').trim().slice(0, QUOTED_CHARS);
}

function unavailable(detail: string, extensions: Record<string, unknown>): ProblemError {
  return new ProblemError('upstream_unavailable', detail, {
    resolution: `Check that the docs site at ${DOCS_URL_ENV} is running and accepts run shares (POST /api/v1/shares), then share again.`,
    extensions: { upstream: extensions },
  });
}

/**
 * POSTs bundles to `{docsUrl}/api/v1/shares` with the webhooks' delivery code: a timeout over the
 * whole exchange, no redirects followed, at most 16 KB of the answer read. The docs site is the
 * operator's own (often on a private network or loopback), so its address is not filtered.
 * Sharing is a person's click, not a stream: keep-alive is off, so each publish has its own
 * connection, closed after it, and nothing is left open between shares (or keeps a stopping
 * server waiting).
 */
export function createDocsSiteClient(options: {
  docsUrl: () => string | undefined;
  timeoutMs: number;
}): DocsSiteClient {
  const client = createOutboundClient({ addresses: 'any', keepAliveMs: 0 });
  return {
    async publish(bundle) {
      const base = options.docsUrl();
      if (!base) {
        throw new ProblemError(
          'service_unavailable',
          'No docs site is configured to publish shared runs to.',
          {
            resolution: `Set ${DOCS_URL_ENV} (or shares.docs_url in the config file) to the docs site's base URL, e.g. https://docs.example.com, and restart the control plane.`,
          },
        );
      }
      const url = `${base}/api/v1/shares`;
      const sent = await send(
        {
          url,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'User-Agent': `switchyard-control-plane/${VERSION} share`,
          },
          body: JSON.stringify(bundle),
        },
        { timeoutMs: options.timeoutMs, client },
      );
      if (sent.statusCode === null) {
        throw unavailable(`The docs site at ${base} could not be reached: ${sent.error}.`, {
          url,
          error: sent.error,
        });
      }
      if (sent.statusCode < 200 || sent.statusCode >= 300) {
        const said = whatItSaid(sent.responseBody);
        throw unavailable(
          `The docs site at ${base} refused the run bundle with ${sent.statusCode}: ${said}`,
          {
            url,
            status: sent.statusCode,
            said,
          },
        );
      }
      let answer: Record<string, unknown> = {};
      try {
        answer = JSON.parse(sent.responseBody ?? '') as Record<string, unknown>;
      } catch {
        // Judged below: an answer without a permalink is refused whatever its shape.
      }
      if (typeof answer?.id !== 'string' || typeof answer.url !== 'string') {
        throw unavailable(
          `The docs site at ${base} answered ${sent.statusCode} without a share id and url: ${whatItSaid(sent.responseBody)}`,
          { url, status: sent.statusCode },
        );
      }
      return { id: answer.id, url: answer.url };
    },
  };
}
