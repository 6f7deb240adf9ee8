import { type components, unwrap } from '@switchyard/client';
import yoctoSpinner from 'yocto-spinner';
import type { Context } from './context.ts';

/** An execution's status record, as GET /api/v1/executions/{id} answers it. */
export type ExecutionRecord = components['schemas']['ExecutionStatusRecord'];
export type ExecutionStatus = ExecutionRecord['status'];

/** Every status, for `runs --status` (the OpenAPI enum, which a type cannot enumerate at run time). */
export const EXECUTION_STATUSES = [
  'queued',
  'pending',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'timeout',
] as const satisfies readonly ExecutionStatus[];
/** `satisfies` refuses a status the API does not have; this refuses to compile if one is missing. */
type UnlistedStatus = Exclude<ExecutionStatus, (typeof EXECUTION_STATUSES)[number]>;
export const EVERY_STATUS_LISTED: [UnlistedStatus] extends [never] ? true : UnlistedStatus = true;

const TERMINAL = new Set<string>(['succeeded', 'failed', 'cancelled', 'timeout']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

export async function getExecution(ctx: Context, id: string): Promise<ExecutionRecord> {
  return unwrap(
    ctx.client.GET('/api/v1/executions/{execution_id}', { params: { path: { execution_id: id } } }),
  );
}

/**
 * Follows an execution until it ends, reading its status record every `intervalMs`. On a
 * terminal, a spinner on stderr says what it is doing meanwhile; elsewhere nothing is drawn.
 */
export async function waitForExecution(ctx: Context, id: string, intervalMs = 500): Promise<ExecutionRecord> {
  const spinner =
    ctx.stderr.isTTY && !ctx.json
      ? yoctoSpinner({ text: `${id}: queued`, stream: process.stderr }).start()
      : undefined;
  try {
    for (;;) {
      const record = await getExecution(ctx, id);
      if (isTerminal(record.status)) return record;
      if (spinner) {
        const waiting = !record.waiting_for
          ? ''
          : record.waiting_for.type === 'approval'
            ? ` for approval ${record.waiting_for.approval_request_id}`
            : ` for ${record.waiting_for.reason ?? 'a child execution'}`;
        spinner.text = `${id}: ${record.status}${waiting}`;
      }
      await new Promise((done) => setTimeout(done, intervalMs));
    }
  } finally {
    spinner?.stop();
  }
}
