import { type SwitchyardClient, unwrap } from '@switchyard/client';
import { queryOptions } from '@tanstack/react-query';

export const WORKFLOWS_KEY = ['workflows'] as const;

/** Statuses an execution never leaves. */
export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);

export function dagQueryKey(workflowId: string) {
  return [...WORKFLOWS_KEY, 'dag', workflowId] as const;
}

export function workflowDagQuery(client: SwitchyardClient, workflowId: string) {
  return queryOptions({
    queryKey: dagQueryKey(workflowId),
    queryFn: () =>
      unwrap(
        client.GET('/api/v1/workflows/{workflow_id}/dag', {
          params: { path: { workflow_id: workflowId } },
        }),
      ),
  });
}

export type WorkflowDag = Awaited<ReturnType<NonNullable<ReturnType<typeof workflowDagQuery>['queryFn']>>>;
export type DagNode = WorkflowDag['nodes'][number];

/** How many of the newest executions the workflow index reads to find recent workflows. */
export const RECENT_SCAN = 200;

export interface RecentWorkflow {
  workflowId: string;
  /** The root's target when the root is among the executions read, else the newest one's. */
  target: string;
  /** Newest activity: created_at of its newest execution read. */
  lastCreatedAt: string;
  executions: number;
  running: boolean;
  failed: boolean;
}

/**
 * Workflows with the newest activity. The execution list has no "roots only" or "group by
 * workflow" filter, so this reads the newest executions (one page) and groups them by workflow,
 * newest first: a workflow shows here while any of its executions is among them.
 */
export function recentWorkflowsQuery(client: SwitchyardClient) {
  return queryOptions({
    queryKey: [...WORKFLOWS_KEY, 'recent'],
    queryFn: async () => {
      const page = await unwrap(
        client.GET('/api/v1/executions', { params: { query: { limit: RECENT_SCAN } } }),
      );
      const byWorkflow = new Map<string, RecentWorkflow>();
      for (const execution of page.executions) {
        let entry = byWorkflow.get(execution.workflow_id);
        if (!entry) {
          entry = {
            workflowId: execution.workflow_id,
            target: execution.target,
            lastCreatedAt: execution.created_at,
            executions: 0,
            running: false,
            failed: false,
          };
          byWorkflow.set(execution.workflow_id, entry);
        }
        entry.executions += 1;
        if (execution.parent_execution_id === null) entry.target = execution.target;
        if (!TERMINAL.has(execution.status)) entry.running = true;
        if (execution.status === 'failed' || execution.status === 'timeout') entry.failed = true;
      }
      return [...byWorkflow.values()];
    },
  });
}
