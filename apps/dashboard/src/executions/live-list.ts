import type { InfiniteData, QueryClient } from '@tanstack/react-query';
import type { ExecutionPage, ExecutionSummary } from './execution-queries.ts';

export type ListData = InfiniteData<ExecutionPage, string | undefined>;

/**
 * Merges a fresh first page into the loaded list without reloading what was scrolled through:
 * executions new since the list loaded go on top, loaded ones take their fresh record. When the
 * fresh page holds no row the list already had, more arrived than one page and the gap cannot be
 * filled, so the list restarts from the fresh page.
 */
export function mergeNewest(data: ListData, fresh: ExecutionPage): ListData {
  const loaded = new Set(data.pages.flatMap((page) => page.executions.map((row) => row.execution_id)));
  const freshById = new Map(fresh.executions.map((row) => [row.execution_id, row]));
  const overlaps = fresh.executions.some((row) => loaded.has(row.execution_id));
  if (!overlaps && loaded.size > 0) return { pages: [fresh], pageParams: [undefined] };
  const added = fresh.executions.filter((row) => !loaded.has(row.execution_id));
  const pages = data.pages.map((page, index) => ({
    ...page,
    executions: [
      ...(index === 0 ? added : []),
      ...page.executions.map((row) => freshById.get(row.execution_id) ?? row),
    ],
  }));
  return { ...data, pages };
}

/** Applies the statuses events reported (by execution id) to the rows already loaded, in one pass. */
export function patchStatuses(
  queryClient: QueryClient,
  queryKey: readonly unknown[],
  statuses: ReadonlyMap<string, string>,
): void {
  if (statuses.size === 0) return;
  queryClient.setQueryData<ListData>(queryKey, (data) =>
    data
      ? {
          ...data,
          pages: data.pages.map((page) => ({
            ...page,
            executions: page.executions.map((row) => {
              const status = statuses.get(row.execution_id);
              return status ? ({ ...row, status } as ExecutionSummary) : row;
            }),
          })),
        }
      : data,
  );
}
