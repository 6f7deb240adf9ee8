import { useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type FormEvent, useEffect, useMemo, useRef } from 'react';
import { EmptyState, TutorialLink } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { EXECUTION_STATUSES, type ExecutionFilters } from './execution-filters.ts';
import { executionListQuery, listExecutions } from './execution-queries.ts';
import { type ListData, mergeNewest, patchStatuses } from './live-list.ts';

const ROW_HEIGHT = 44;

function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** The filter form: applying it rewrites the URL's search params, which drive the query. */
function Filters({ filters }: { filters: ExecutionFilters }) {
  const navigate = useNavigate();
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next: Record<string, string | undefined> = {};
    for (const key of ['status', 'target', 'node_id', 'workflow_id'] as const) {
      const value = String(form.get(key) ?? '').trim();
      next[key] = value || undefined;
    }
    const since = String(form.get('since') ?? '');
    next.since = since ? new Date(since).toISOString() : undefined;
    void navigate({ to: '/executions', search: next });
  }
  const sinceLocal = filters.since ? toLocalInput(filters.since) : '';
  return (
    <form className="filters" onSubmit={apply} aria-label="Filter executions" key={JSON.stringify(filters)}>
      <label>
        Status
        <select name="status" defaultValue={filters.status ?? ''}>
          <option value="">any</option>
          {EXECUTION_STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      <label>
        Target
        <input name="target" defaultValue={filters.target ?? ''} placeholder="node.function" />
      </label>
      <label>
        Node
        <input name="node_id" defaultValue={filters.node_id ?? ''} />
      </label>
      <label>
        Workflow
        <input name="workflow_id" defaultValue={filters.workflow_id ?? ''} />
      </label>
      <label>
        Since
        <input name="since" type="datetime-local" defaultValue={sinceLocal} />
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={() => void navigate({ to: '/executions', search: {} })}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** An ISO instant as the value of a datetime-local input (local wall time, minutes). */
function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/**
 * Every execution matching the filters, newest first. Pages load as the list scrolls (keyset
 * cursors), only the visible rows are rendered (so 100,000 rows scroll smoothly), and execution
 * events add new executions on top and update statuses in place without a reload.
 */
export function ExecutionsPage() {
  const filters = useSearch({ from: '/executions' });
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const options = executionListQuery(client, filters);
  const list = useInfiniteQuery(options);
  const rows = useMemo(() => list.data?.pages.flatMap((page) => page.executions) ?? [], [list.data]);

  // Events arrive in bursts (a workflow starts many executions), so they are applied at most
  // once per burst: statuses collected meanwhile are patched into the loaded rows in one pass,
  // then the newest page is read once to add executions that started.
  const pendingStatuses = useRef(new Map<string, string>());
  const refresh = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (refresh.current) clearTimeout(refresh.current);
    },
    [],
  );
  useLiveEvents((event) => {
    if (event.stream !== 'executions') return;
    const id = event.data.execution_id;
    const status = event.data.status;
    if (typeof id === 'string' && typeof status === 'string') pendingStatuses.current.set(id, status);
    if (refresh.current) return;
    refresh.current = setTimeout(async () => {
      refresh.current = null;
      const statuses = pendingStatuses.current;
      pendingStatuses.current = new Map();
      patchStatuses(queryClient, options.queryKey, statuses);
      try {
        const fresh = await listExecutions(client, filters);
        queryClient.setQueryData<ListData>(options.queryKey, (data) =>
          data ? mergeNewest(data, fresh) : data,
        );
      } catch {
        // The next event or a refetch tries again; the list keeps what it shows.
      }
    }, 250);
  });

  const viewport = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => viewport.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (index) => rows[index]?.execution_id ?? index,
  });
  const items = virtualizer.getVirtualItems();
  const lastIndex = items[items.length - 1]?.index ?? -1;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  useEffect(() => {
    if (lastIndex >= rows.length - 20 && hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [lastIndex, rows.length, hasNextPage, isFetchingNextPage, fetchNextPage]);

  const filtered = Object.keys(filters).length > 0;
  return (
    <>
      <div className="page-head">
        <h1>Executions</h1>
      </div>
      <Filters filters={filters} />
      {list.error ? <ProblemMessage error={list.error} context="Could not list the executions" /> : null}
      {list.isPending ? <p className="muted">Loading executions…</p> : null}
      {list.data && rows.length === 0 ? (
        filtered ? (
          <EmptyState title="No execution matches these filters">
            <p>Clear a filter, or pick an earlier “since” time.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No execution yet">
            <p>Call a function of a registered node and its execution appears here as it runs.</p>
            <p>
              <TutorialLink />
            </p>
          </EmptyState>
        )
      ) : null}
      {rows.length > 0 ? (
        <section className="rows" aria-label="Executions">
          <div className="rows-head" aria-hidden="true">
            <span>Status</span>
            <span>Target</span>
            <span className="wide">Execution</span>
            <span>Duration</span>
            <span className="wide">Created</span>
          </div>
          <div className="rows-viewport" ref={viewport} data-testid="executions-viewport">
            <ul style={{ height: virtualizer.getTotalSize(), position: 'relative', margin: 0, padding: 0 }}>
              {items.map((item) => {
                const row = rows[item.index]!;
                return (
                  <li key={item.key} style={{ listStyle: 'none' }}>
                    <Link
                      to="/executions/$executionId"
                      params={{ executionId: row.execution_id }}
                      className="row"
                      data-execution-id={row.execution_id}
                      style={{ height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}
                    >
                      <span>
                        <StatusBadge status={row.status} />
                      </span>
                      <span className="mono">{row.target}</span>
                      <span className="wide mono">{row.execution_id}</span>
                      <span>{duration(row.duration_ms)}</span>
                      <span className="wide">
                        <RelativeTime iso={row.created_at} />
                      </span>
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
          <div className="list-foot">
            {rows.length} loaded
            {list.isFetchingNextPage
              ? ', loading more…'
              : list.hasNextPage
                ? ', more as you scroll'
                : ', all shown'}
          </div>
        </section>
      ) : null}
    </>
  );
}
