/**
 * The ELK graph a workflow DAG is laid out from, and the positions read back from ELK's answer.
 * Pure data, no browser API: the page runs it through ELK in a worker, and
 * bench/dashboard/dag-layout.mjs runs the very same graph through ELK in Node to time it.
 */

/** Every execution is drawn as a box of this size; ELK only needs the sizes, not the content. */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 72;

const LAYER_GAP = 56;
const NODE_GAP = 16;

/**
 * Layered (Sugiyama) left to right: a parent sits left of its children, each depth is a column.
 * A workflow is a tree (each execution has at most one parent), so the layers and the order
 * within them are already known: the layer is the execution's depth and the order is a
 * depth-first walk, which puts siblings together and crosses no edge. ELK is handed both as the
 * boxes' starting positions (INTERACTIVE layering and crossing minimisation read them) and only
 * places the boxes. ELK's own layering and crossing passes cost seconds on a parent that fans out
 * to hundreds of children, and longest-path layering pulls every leaf to the last column, which on
 * a deep workflow multiplies the work by its depth. The page draws its own edges, so the cheapest
 * router is asked for. bench/dashboard/dag-layout.mjs times 500 executions in several shapes.
 */
export const LAYOUT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.edgeRouting': 'POLYLINE',
  'elk.layered.thoroughness': '1',
  'elk.layered.layering.strategy': 'INTERACTIVE',
  'elk.layered.crossingMinimization.strategy': 'INTERACTIVE',
  'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
  'elk.layered.compaction.postCompaction.strategy': 'NONE',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
  'elk.separateConnectedComponents': 'false',
  'elk.layered.spacing.nodeNodeBetweenLayers': String(LAYER_GAP),
  'elk.spacing.nodeNode': String(NODE_GAP),
};

export interface DagNodeInput {
  id: string;
  /** 1 for a root, its parent's depth + 1 for a child. */
  depth: number;
}

export interface DagEdgeInput {
  from: string;
  to: string;
}

export interface ElkInputGraph {
  id: string;
  layoutOptions: Record<string, string>;
  children: { id: string; width: number; height: number; x: number; y: number }[];
  edges: { id: string; sources: string[]; targets: string[] }[];
}

/** Each execution's place in a depth-first walk from the roots, children in the order given. */
function depthFirstOrder(
  nodes: readonly DagNodeInput[],
  edges: readonly DagEdgeInput[],
): Map<string, number> {
  const children = new Map<string, string[]>();
  const hasParent = new Set<string>();
  for (const edge of edges) {
    const list = children.get(edge.from);
    if (list) list.push(edge.to);
    else children.set(edge.from, [edge.to]);
    hasParent.add(edge.to);
  }
  const order = new Map<string, number>();
  // An explicit stack: a workflow can be thousands of calls deep.
  for (const node of nodes) {
    if (hasParent.has(node.id) || order.has(node.id)) continue;
    const stack = [node.id];
    while (stack.length > 0) {
      const id = stack.pop() as string;
      if (order.has(id)) continue;
      order.set(id, order.size);
      const next = children.get(id) ?? [];
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i] as string);
    }
  }
  // Executions on a cycle or under a missing parent keep the order they were given in, after the rest.
  for (const node of nodes) if (!order.has(node.id)) order.set(node.id, order.size);
  return order;
}

/** The graph ELK lays out: one fixed-size box per execution, one edge per parent → child link. */
export function elkGraphOf(nodes: readonly DagNodeInput[], edges: readonly DagEdgeInput[]): ElkInputGraph {
  const known = new Set(nodes.map((node) => node.id));
  const kept = edges.filter((edge) => known.has(edge.from) && known.has(edge.to));
  const order = depthFirstOrder(nodes, kept);
  return {
    id: 'workflow',
    layoutOptions: LAYOUT_OPTIONS,
    children: nodes.map((node) => ({
      id: node.id,
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
      x: (node.depth - 1) * (NODE_WIDTH + LAYER_GAP),
      y: (order.get(node.id) ?? 0) * (NODE_HEIGHT + NODE_GAP),
    })),
    edges: kept.map((edge) => ({ id: `${edge.from}->${edge.to}`, sources: [edge.from], targets: [edge.to] })),
  };
}

export interface Position {
  x: number;
  y: number;
}

/**
 * Top-left corner of each box, by execution id: its place in its layer (y) from ELK's laid-out
 * graph, its layer's column (x) from the graph it was given. ELK widens the gap between two layers
 * to fit the slopes of its own edge routes (by over 1,500 px beside a parent with hundreds of
 * children); the page draws its own edges, which need only the fixed gap.
 */
export function positionsOf(
  laidOut: { children?: { id: string; x?: number; y?: number }[] },
  given: ElkInputGraph,
): Map<string, Position> {
  const columns = new Map(given.children.map((child) => [child.id, child.x]));
  const positions = new Map<string, Position>();
  for (const child of laidOut.children ?? [])
    positions.set(child.id, { x: columns.get(child.id) ?? child.x ?? 0, y: child.y ?? 0 });
  return positions;
}
