import { type SwitchyardClient, unwrap } from '@switchyard/client';
import { queryOptions } from '@tanstack/react-query';

/** Every node query starts with this key, so one invalidation refreshes lists and node pages. */
export const NODES_KEY = ['nodes'] as const;

/** The most nodes one list call may return. */
const PAGE_SIZE = 200;

async function fetchAllNodes(client: SwitchyardClient) {
  const first = await unwrap(
    client.GET('/api/ui/v1/nodes', { params: { query: { limit: String(PAGE_SIZE) } } }),
  );
  const nodes = [...first.nodes];
  let next = first.pagination.next_offset;
  // Pages also end at the answer's byte bound, so follow next_offset until the server says done.
  while (next !== null && next !== undefined) {
    const page = await unwrap(
      client.GET('/api/ui/v1/nodes', {
        params: { query: { limit: String(PAGE_SIZE), offset: String(next) } },
      }),
    );
    nodes.push(...page.nodes);
    next = page.pagination.next_offset;
  }
  return nodes;
}

export type NodeSummary = Awaited<ReturnType<typeof fetchAllNodes>>[number];

/**
 * Node events say when a status changes; heartbeats and health checks raise none, so the node
 * queries are also read again at the heartbeat's pace to keep "last heartbeat" true.
 */
const HEARTBEAT_REFRESH_MS = 15_000;

/** Every registered node with its instances (GET /api/ui/v1/nodes, all pages). */
export function nodesQuery(client: SwitchyardClient) {
  return queryOptions({
    queryKey: NODES_KEY,
    queryFn: () => fetchAllNodes(client),
    refetchInterval: HEARTBEAT_REFRESH_MS,
  });
}

/** One node with every instance and its functions' schemas (GET /api/v1/nodes/{id}). */
export function nodeQuery(client: SwitchyardClient, nodeId: string) {
  return queryOptions({
    queryKey: [...NODES_KEY, nodeId],
    queryFn: () => unwrap(client.GET('/api/v1/nodes/{node_id}', { params: { path: { node_id: nodeId } } })),
    refetchInterval: HEARTBEAT_REFRESH_MS,
  });
}
