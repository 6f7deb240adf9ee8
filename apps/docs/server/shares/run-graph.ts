import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';

/**
 * The run drawn as a graph: executions as boxes, parent → child calls as arrows, laid out top to
 * bottom by dagre (a Sugiyama-style layered layout) on the server, so the permalink page is a
 * plain SVG with no script. Everything here is geometry and display text; the page only draws it.
 */
export interface RunGraphView {
  width: number;
  height: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface GraphNode {
  /** Fragment id of the execution's section on the page: where the node links to. */
  anchor: string;
  /** Top-left corner and size of the box. */
  x: number;
  y: number;
  width: number;
  height: number;
  status: string;
  /** A mark for the status, so it reads without colour: ✓, ✗, … */
  mark: string;
  /** The three lines of the box, each cut to fit it (with …). */
  func: string;
  agent: string;
  detail: string;
  /** Everything the box says, uncut: its tooltip and (as its `<title>`) its accessible name. */
  label: string;
}

export interface GraphEdge {
  /** SVG path data through dagre's bend points, ending at the child's box. */
  d: string;
}

/** The input of the layout: what run-share-view.ts knows of each execution. */
export interface GraphInputNode {
  anchor: string;
  executionId: string;
  agent: string;
  func: string;
  status: string;
  duration: string;
}

/**
 * Larger runs are not drawn: dagre takes about half a second for 300 boxes (and seconds for
 * thousands), and a fan-out of hundreds is a strip too wide to read. The page lists them instead.
 */
export const MAX_GRAPH_NODES = 300;

const BOX_WIDTH = 216;
/** Space around the drawing, for the focus ring of a box at its edge. */
const MARGIN = 8;
/** Vertical space between ranks, where the arrows turn. */
const RANK_GAP = 44;
const BOX_HEIGHT = 74;
/** Characters that fit on a line of a box, for the widest glyphs of the fonts used (13 px). */
const LINE_CHARS = 26;

const MARKS: Record<string, string> = {
  succeeded: '✓',
  failed: '✗',
  timeout: '◷',
  cancelled: '⊘',
  running: '▶',
  waiting: '‖',
  queued: '…',
  pending: '…',
};

/**
 * The mark of a status, so a status reads without its colour. Each is in the Unicode blocks the
 * common fonts (DejaVu, Noto) cover; the media-control symbols (⏱, ⏸) are not everywhere.
 */
export function statusMark(status: string): string {
  return MARKS[status] ?? '•';
}

function fit(text: string, chars = LINE_CHARS): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Down from `from`, across halfway down, down to `to`, with rounded turns. */
function elbow(from: { x: number; y: number }, to: { x: number; y: number }): string {
  const middle = (from.y + to.y) / 2;
  const dx = to.x - from.x;
  if (Math.abs(dx) < 1) return `M${round(from.x)} ${round(from.y)} V${round(to.y)}`;
  const r = Math.min(6, Math.abs(dx) / 2, (to.y - from.y) / 4);
  const sign = Math.sign(dx);
  return [
    `M${round(from.x)} ${round(from.y)}`,
    `V${round(middle - r)}`,
    `Q${round(from.x)} ${round(middle)} ${round(from.x + sign * r)} ${round(middle)}`,
    `H${round(to.x - sign * r)}`,
    `Q${round(to.x)} ${round(middle)} ${round(to.x)} ${round(middle + r)}`,
    `V${round(to.y)}`,
  ].join(' ');
}

/** Lays the run out; undefined when it has no executions or more than {@link MAX_GRAPH_NODES}. */
export function layoutRunGraph(
  nodes: GraphInputNode[],
  edges: Array<{ from: string; to: string }>,
): RunGraphView | undefined {
  if (nodes.length === 0 || nodes.length > MAX_GRAPH_NODES) return undefined;
  const graph = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>();
  // Aligned up and left: the first execution sits at the top left, where a phone's scrolled box
  // opens, and each parent above its first child.
  graph.setGraph({ rankdir: 'TB', align: 'UL', nodesep: 20, ranksep: RANK_GAP });
  graph.setDefaultEdgeLabel(() => ({}));
  // dagre keys its nodes in plain objects, where an execution id such as "valueOf" or
  // "__proto__" would meet Object.prototype: it gets each node's position in the list instead.
  const keyOf = new Map(nodes.map((node, i) => [node.executionId, `n${i}`]));
  for (const key of keyOf.values()) graph.setNode(key, { width: BOX_WIDTH, height: BOX_HEIGHT });
  for (const edge of edges) {
    // The bundle's edges name its nodes (the publish handler checks); a self-call is no arrow.
    const from = keyOf.get(edge.from);
    const to = keyOf.get(edge.to);
    if (from && to && from !== to) graph.setEdge(from, to);
  }
  dagre.layout(graph);
  // dagre's own width counts room its alignments left unused (with align UL, a strip at the
  // left): the drawing is framed by what is drawn instead, so it centres in a wide box.
  const centres = nodes.map((_node, i) => graph.node(`n${i}`));
  const edgePoints = graph.edges().flatMap((edge) => graph.edge(edge).points ?? []);
  const left = Math.min(...centres.map((c) => (c.x ?? 0) - BOX_WIDTH / 2), ...edgePoints.map((p) => p.x));
  const right = Math.max(...centres.map((c) => (c.x ?? 0) + BOX_WIDTH / 2), ...edgePoints.map((p) => p.x));
  const top = Math.min(...centres.map((c) => (c.y ?? 0) - BOX_HEIGHT / 2));
  const bottom = Math.max(...centres.map((c) => (c.y ?? 0) + BOX_HEIGHT / 2));
  const at = (label: NodeLabel) => ({
    x: (label.x ?? 0) - left + MARGIN,
    y: (label.y ?? 0) - top + MARGIN,
  });
  const drawn: GraphNode[] = nodes.map((node, i) => {
    const box = at(graph.node(`n${i}`));
    const detail = `${node.status} · ${node.duration}`;
    return {
      anchor: node.anchor,
      x: round(box.x - BOX_WIDTH / 2),
      y: round(box.y - BOX_HEIGHT / 2),
      width: BOX_WIDTH,
      height: BOX_HEIGHT,
      status: node.status,
      mark: statusMark(node.status),
      func: fit(node.func),
      agent: fit(node.agent),
      detail: fit(detail, LINE_CHARS - 2),
      label: `${node.func} on ${node.agent}: ${detail}, execution ${node.executionId}`,
    };
  });
  const lines: GraphEdge[] = graph.edges().map((edge) => {
    const parent = at(graph.node(edge.v));
    const child = at(graph.node(edge.w));
    const from = { x: parent.x, y: parent.y + BOX_HEIGHT / 2 };
    const to = { x: child.x, y: child.y - BOX_HEIGHT / 2 };
    // A call one rank down (every call of a control-plane run: an execution has one parent) is
    // drawn as an org chart draws it: down, across in the gap between the ranks, down. dagre's
    // straight segments would cut behind the boxes of other executions on the way.
    if (Math.abs(to.y - from.y - RANK_GAP) < 1) return { d: elbow(from, to) };
    const points = graph.edge(edge).points ?? [];
    const path = points.map((p, i) => {
      const x = p.x - left + MARGIN;
      const y = p.y - top + MARGIN;
      return `${i === 0 ? 'M' : 'L'}${round(x)} ${round(y)}`;
    });
    return { d: path.join(' ') };
  });
  return {
    width: Math.ceil(right - left + 2 * MARGIN),
    height: Math.ceil(bottom - top + 2 * MARGIN),
    nodes: drawn,
    edges: lines,
  };
}
