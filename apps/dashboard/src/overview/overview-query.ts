import { type SwitchyardClient, unwrap } from '@switchyard/client';
import { queryOptions } from '@tanstack/react-query';

export const OVERVIEW_KEY = ['overview'] as const;

function fetchOverview(client: SwitchyardClient) {
  return unwrap(client.GET('/api/ui/v1/overview'));
}

export type Overview = Awaited<ReturnType<typeof fetchOverview>>;

/**
 * The fleet figures. Events refresh it as things happen; the minute buckets also move with the
 * clock when nothing happens, hence the interval.
 */
export function overviewQuery(client: SwitchyardClient) {
  return queryOptions({
    queryKey: OVERVIEW_KEY,
    queryFn: () => fetchOverview(client),
    refetchInterval: 30_000,
  });
}
