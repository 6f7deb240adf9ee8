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
 * a misconfiguration worth seeing).
 */
export const httpHealthProbe: HealthProbe = async (baseUrl, timeoutMs) => {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  try {
    const url = agentUrl(baseUrl, 'health');
    const response = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
      headers: { accept: 'application/json' },
    });
    const text = await readLimited(response);
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
    const name = (error as Error).name;
    const message =
      name === 'TimeoutError' || name === 'AbortError'
        ? `no answer within ${timeoutMs} ms`
        : describeFetchError(error);
    return { ok: false, statusCode: null, error: message, durationMs: elapsed() };
  }
};

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > BODY_LIMIT) {
      await reader.cancel();
      break;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reportedStatus(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { status?: unknown };
    return typeof body?.status === 'string' ? body.status.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

// undici wraps the socket error (ECONNREFUSED, ENOTFOUND) in `cause`; that is the useful part.
function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return (error as Error).message || 'request failed';
}
