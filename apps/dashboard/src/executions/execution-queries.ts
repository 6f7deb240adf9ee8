import { type paths, type SwitchyardClient, unwrap } from '@switchyard/client';
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import type { ExecutionFilters } from './execution-filters.ts';

type ExecutionQuery = NonNullable<paths['/api/v1/executions']['get']['parameters']['query']>;

export const EXECUTIONS_KEY = ['executions'] as const;

/** Rows per list call; the server also ends a page early at its byte bound. */
export const LIST_PAGE = 100;

export function listExecutions(client: SwitchyardClient, filters: ExecutionFilters, cursor?: string) {
  const query = {
    ...filters,
    status: filters.status as ExecutionQuery['status'],
    limit: LIST_PAGE,
    ...(cursor ? { cursor } : {}),
  };
  return unwrap(client.GET('/api/v1/executions', { params: { query } }));
}

export type ExecutionPage = Awaited<ReturnType<typeof listExecutions>>;
export type ExecutionSummary = ExecutionPage['executions'][number];

/** The filtered list, newest first, one keyset page at a time. */
export function executionListQuery(client: SwitchyardClient, filters: ExecutionFilters) {
  return infiniteQueryOptions({
    queryKey: [...EXECUTIONS_KEY, 'list', filters],
    queryFn: ({ pageParam }) => listExecutions(client, filters, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
}

export function executionQuery(client: SwitchyardClient, executionId: string) {
  return queryOptions({
    queryKey: [...EXECUTIONS_KEY, 'one', executionId],
    queryFn: () =>
      unwrap(
        client.GET('/api/v1/executions/{execution_id}', {
          params: { path: { execution_id: executionId } },
        }),
      ),
  });
}

export function executionLogsQuery(client: SwitchyardClient, executionId: string) {
  return queryOptions({
    queryKey: [...EXECUTIONS_KEY, 'logs', executionId],
    queryFn: async () => {
      // Follow next_after to the end: logs and notes of one execution are read whole.
      const first = await unwrap(
        client.GET('/api/v1/executions/{execution_id}/logs', {
          params: { path: { execution_id: executionId }, query: { limit: 500 } },
        }),
      );
      const entries = [...first.entries];
      let after = first.next_after;
      while (after !== null && after !== undefined) {
        const page = await unwrap(
          client.GET('/api/v1/executions/{execution_id}/logs', {
            params: { path: { execution_id: executionId }, query: { after, limit: 500 } },
          }),
        );
        entries.push(...page.entries);
        after = page.next_after;
      }
      return entries;
    },
  });
}

export function webhookDeliveriesQuery(client: SwitchyardClient, executionId: string) {
  return queryOptions({
    queryKey: [...EXECUTIONS_KEY, 'deliveries', executionId],
    queryFn: () =>
      unwrap(
        client.GET('/api/ui/v1/executions/{execution_id}/webhook/deliveries', {
          params: { path: { execution_id: executionId } },
        }),
      ),
  });
}

/** The input the execution was called with, and its target (so it can be read or run again). */
export function executionInputQuery(client: SwitchyardClient, executionId: string) {
  return queryOptions({
    queryKey: [...EXECUTIONS_KEY, 'input', executionId],
    queryFn: () =>
      unwrap(
        client.GET('/api/ui/v1/executions/{execution_id}/input', {
          params: { path: { execution_id: executionId } },
        }),
      ),
    // An execution's input never changes.
    staleTime: Number.POSITIVE_INFINITY,
  });
}
