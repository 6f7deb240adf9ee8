import type { QueryClient, QueryKey } from '@tanstack/react-query';

/**
 * Marks queries stale after a live event and refetches them, but lets a refetch already under
 * way finish instead of restarting it: events arrive in bursts, and restarting on each one would
 * keep a busy fleet's page from ever finishing a fetch.
 */
export function refreshOnEvent(queryClient: QueryClient, queryKey: QueryKey): void {
  void queryClient.invalidateQueries({ queryKey }, { cancelRefetch: false });
}
