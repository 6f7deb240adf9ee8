/** The list's filters, kept in the URL's search params so a filtered list can be linked and reloaded. */
export interface ExecutionFilters {
  status?: string;
  target?: string;
  node_id?: string;
  workflow_id?: string;
  /** ISO time: only executions created at or after it. */
  since?: string;
}

export const EXECUTION_STATUSES = [
  'queued',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'timeout',
] as const;

const KEYS = ['status', 'target', 'node_id', 'workflow_id', 'since'] as const;

/** Typed search params for the router: non-empty strings only, anything else dropped. */
export function validateExecutionFilters(search: Record<string, unknown>): ExecutionFilters {
  const filters: ExecutionFilters = {};
  for (const key of KEYS) {
    const value = search[key];
    if (typeof value === 'string' && value.trim() !== '') filters[key] = value.trim();
  }
  return filters;
}
