import { unwrap } from '@switchyard/client';
import yoctoSpinner from 'yocto-spinner';
import type { Context } from './context.ts';

export const EXECUTION_STATUSES = [
  'queued',
  'pending',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'timeout',
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

const TERMINAL = new Set<string>(['succeeded', 'failed', 'cancelled', 'timeout']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

export interface ExecutionRecord {
  execution_id: string;
  run_id: string;
  workflow_id: string;
  parent_execution_id: string | null;
  target: string;
  node_id: string;
  status: ExecutionStatus;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  result: unknown;
  error: string | null;
  routed_version: string | null;
  webhook_registered: boolean;
  webhook_error: string | null;
  waiting_for?: { type: string; approval_request_id?: string; reason?: string | null };
}

export async function getExecution(ctx: Context, id: string): Promise<ExecutionRecord> {
  return (await unwrap(
    ctx.client.GET('/api/v1/executions/{execution_id}', { params: { path: { execution_id: id } } }),
  )) as ExecutionRecord;
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
        const waiting = record.waiting_for
          ? ` for ${record.waiting_for.type}${record.waiting_for.approval_request_id ? ` ${record.waiting_for.approval_request_id}` : ''}`
          : '';
        spinner.text = `${id}: ${record.status}${waiting}`;
      }
      await new Promise((done) => setTimeout(done, intervalMs));
    }
  } finally {
    spinner?.stop();
  }
}
