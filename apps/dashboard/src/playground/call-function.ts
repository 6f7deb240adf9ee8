import { ApiProblem, type components, type SwitchyardClient, unwrap } from '@switchyard/client';

export type Lane = 'sync' | 'async';

/** What a call answered: the finished execution (sync lane) or the queued one (async lane). */
export type CallOutcome =
  | { lane: 'sync'; target: string; result: components['schemas']['ExecutionResult'] }
  | { lane: 'async'; target: string; accepted: components['schemas']['ExecutionAccepted'] };

/**
 * Calls a function the way any client does: `POST /api/v1/execute/{target}` waits for the result
 * (up to the control plane's synchronous timeout), `POST /api/v1/execute/async/{target}` queues it
 * and answers 202 at once. A refusal or a failed execution rejects with the server's problem.
 */
export async function callFunction(
  client: SwitchyardClient,
  lane: Lane,
  target: string,
  input: Record<string, unknown>,
): Promise<CallOutcome> {
  const request = { params: { path: { target } }, body: { input } };
  if (lane === 'sync') {
    return { lane, target, result: await unwrap(client.POST('/api/v1/execute/{target}', request)) };
  }
  return { lane, target, accepted: await unwrap(client.POST('/api/v1/execute/async/{target}', request)) };
}

/**
 * What a failed call's problem says about the execution it was recorded on: a sync call that
 * failed (502 `execution_failed`), could not reach the agent (502 `upstream_unavailable`) or ran
 * out of time (504) names its execution; a refused call (400, 404, 503) names none.
 */
export interface FailedExecution {
  executionId: string;
  status: string | undefined;
  errorMessage: string | undefined;
  errorDetails: unknown;
  durationMs: number | undefined;
}

export function failedExecutionOf(error: unknown): FailedExecution | undefined {
  if (!(error instanceof ApiProblem) || !error.problem) return undefined;
  const problem = error.problem as Record<string, unknown>;
  if (typeof problem.execution_id !== 'string') return undefined;
  return {
    executionId: problem.execution_id,
    status: typeof problem.execution_status === 'string' ? problem.execution_status : undefined,
    errorMessage: typeof problem.error_message === 'string' ? problem.error_message : undefined,
    errorDetails: problem.error_details ?? null,
    durationMs: typeof problem.duration_ms === 'number' ? problem.duration_ms : undefined,
  };
}
