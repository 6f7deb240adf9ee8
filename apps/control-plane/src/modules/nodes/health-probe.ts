import { OutboundError } from '../../platform/outbound/index.ts';
import { nodeAgentCalls } from './agent-calls.ts';
import { agentUrl } from './agent-urls.ts';

/** The outcome of one `GET {base_url}/health`. */
export interface ProbeResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** Probes one agent; injected so tests and callers can swap the transport. */
export type HealthProbe = (baseUrl: string, timeoutMs: number) => Promise<ProbeResult>;

/** Largest health body read; the answer is only checked for its status, so the rest is dropped. */
const BODY_LIMIT = 64 * 1024;

/**
 * Probes `GET {base_url}/health` over HTTP: healthy is a 2xx answer within the timeout. A JSON
 * body whose `status` says `unhealthy` or `error` also counts as a failure, for agents that answer
 * 200 and report trouble in the body. Redirects are not followed (a health endpoint that moves is
 * a misconfiguration worth seeing): the outbound client never follows one.
 */
export const httpHealthProbe: HealthProbe = async (baseUrl, timeoutMs) => {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  try {
    const url = agentUrl(baseUrl, 'health');
    const response = await nodeAgentCalls.request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      timeoutMs,
      maxBodyBytes: BODY_LIMIT,
      overLimit: 'truncate',
    });
    const text = response.body.toString('utf8');
    if (response.status < 200 || response.status > 299) {
      return {
        ok: false,
        statusCode: response.status,
        error: `health answered ${response.status}`,
        durationMs: elapsed(),
      };
    }
    const reported = reportedStatus(text);
    if (reported === 'unhealthy' || reported === 'error') {
      return {
        ok: false,
        statusCode: response.status,
        error: `health reported "${reported}"`,
        durationMs: elapsed(),
      };
    }
    return { ok: true, statusCode: response.status, error: null, durationMs: elapsed() };
  } catch (error) {
    const message =
      error instanceof OutboundError && error.kind === 'timeout'
        ? `no answer within ${timeoutMs} ms`
        : describeFailure(error);
    return { ok: false, statusCode: null, error: message, durationMs: elapsed() };
  }
};

function reportedStatus(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { status?: unknown };
    return typeof body?.status === 'string' ? body.status.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** The socket's code (ECONNREFUSED, ENOTFOUND) and its message; that is the useful part. */
function describeFailure(error: unknown): string {
  const code = error instanceof OutboundError ? error.code : undefined;
  const message = (error as Error).message;
  if (code) return `${code}${message ? `: ${message}` : ''}`;
  return message || 'request failed';
}
