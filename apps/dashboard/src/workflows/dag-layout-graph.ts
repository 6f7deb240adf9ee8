/**
 * The ELK graph a workflow DAG is laid out from, and the positions read back from ELK's answer.
 * Pure data, no browser API: the page runs it through ELK in a worker, and
 * bench/dashboard/dag-layout.mjs runs the very same graph through ELK in Node to time it.
 */

/** Every execution is drawn as a box of this size; ELK only needs the sizes, not the content. */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 72;

/**
 * Layered (Sugiyama) left to right: a parent sits left of its children, each depth is a column.
 * The page draws its own edges between the boxes, so ELK's edge routes are not used and the
 * cheapest router (straight polylines) is asked for. The rest keeps a 500-execution workflow well
 * under a second (bench/dashboard/dag-layout.mjs measures it): a parent that fans out to hundreds
 * of children makes one layer of hundreds of nodes, where ELK's defaults (network-simplex layering,
 * the greedy-switch crossing pass, post-compaction) cost seconds and change little for a tree, which
 * is what a workflow is (each execution has at most one parent).
 */
export const LAYOUT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.edgeRouting': 'POLYLINE',
  'elk.layered.thoroughness': '1',
  'elk.layered.layering.strategy': 'LONGEST_PATH',
  'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
  'elk.layered.compaction.postCompaction.strategy': 'NONE',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
  'elk.separateConnectedComponents': 'false',
  'elk.layered.spacing.nodeNodeBetweenLayers': '56',
  'elk.spacing.nodeNode': '16',
};

export interface DagEdgeInput {
  from: string;
  to: string;
}

export interface ElkInputGraph {
  id: string;
  layoutOptions: Record<string, string>;
  children: { id: string; width: number; height: number }[];
  edges: { id: string; sources: string[]; targets: string[] }[];
}

/** The graph ELK lays out: one fixed-size box per execution, one edge per parent → child link. */
export function elkGraphOf(executionIds: readonly string[], edges: readonly DagEdgeInput[]): ElkInputGraph {
  const known = new Set(executionIds);
  return {
    id: 'workflow',
    layoutOptions: LAYOUT_OPTIONS,
    children: executionIds.map((id) => ({ id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: edges
      .filter((edge) => known.has(edge.from) && known.has(edge.to))
      .map((edge) => ({ id: `${edge.from}->${edge.to}`, sources: [edge.from], targets: [edge.to] })),
  };
}

export interface Position {
  x: number;
  y: number;
}

/** Top-left corner of each box, by execution id, from ELK's laid-out graph. */
export function positionsOf(laidOut: {
  children?: { id: string; x?: number; y?: number }[];
}): Map<string, Position> {
  const positions = new Map<string, Position>();
  for (const child of laidOut.children ?? []) positions.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
  return positions;
}
