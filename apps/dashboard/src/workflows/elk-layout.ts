import ELK from 'elkjs/lib/elk-api.js';
// ELK's layout code (GWT-compiled Java) run as a worker that Vite bundles into its own file under
// /ui/assets/: the page stays responsive while it lays out, and nothing is evaluated from strings
// or blob URLs, so the Content-Security-Policy (worker-src falls back to script-src 'self') allows
// it. elk.bundled.js would run the same code on the page's own thread.
import ElkWorker from 'elkjs/lib/elk-worker.min.js?worker';
import {
  type DagEdgeInput,
  type DagNodeInput,
  elkGraphOf,
  type Position,
  positionsOf,
} from './dag-layout-graph.ts';

let elk: InstanceType<typeof ELK> | undefined;

/** Executions in the warm-up layout: a tree three calls wide, a few levels deep. */
const WARM_UP_SIZE = 40;

function warmUpWorkflow(): { nodes: DagNodeInput[]; edges: DagEdgeInput[] } {
  const nodes: DagNodeInput[] = [{ id: 'warm-up-0', depth: 1 }];
  const edges: DagEdgeInput[] = [];
  for (let i = 1; i < WARM_UP_SIZE; i++) {
    const parent = Math.floor((i - 1) / 3);
    nodes.push({ id: `warm-up-${i}`, depth: (nodes[parent]?.depth ?? 0) + 1 });
    edges.push({ from: `warm-up-${parent}`, to: `warm-up-${i}` });
  }
  return { nodes, edges };
}

/**
 * The tab's one ELK worker, started the first time a workflow route matches (see
 * startLayoutEngine) or, failing that, on the first layout.
 */
function layoutEngine(): InstanceType<typeof ELK> {
  if (elk) return elk;
  elk = new ELK({ workerFactory: () => new ElkWorker(), algorithms: ['layered'] });
  // A small workflow laid out right away runs ELK's start-up (loading and compiling its 1.4 MB of
  // code, registering its algorithms) and warms the code a real layout runs, while the page still
  // loads its code and fetches the DAG, instead of before (and during) the first real layout.
  const { nodes, edges } = warmUpWorkflow();
  void elk.layout(elkGraphOf(nodes, edges)).catch(() => {});
  return elk;
}

/**
 * Starts the layout worker, once per tab. The router calls it as soon as a workflow route
 * matches, before the workflow page's own code has loaded.
 */
export function startLayoutEngine(): void {
  layoutEngine();
}

/** Name of the performance measure each layout leaves (detail: how many executions). */
export const LAYOUT_MEASURE = 'switchyard:workflow-layout';

/**
 * Positions of every execution's box in the workflow's DAG, laid out by ELK in a worker. Each
 * layout is recorded as a performance measure, so its time can be read in the browser's
 * performance timeline (the browser test reads it for a 500-execution workflow).
 */
export async function layoutDag(
  nodes: readonly DagNodeInput[],
  edges: readonly DagEdgeInput[],
): Promise<Map<string, Position>> {
  const started = performance.now();
  const graph = elkGraphOf(nodes, edges);
  const laidOut = await layoutEngine().layout(graph);
  const positions = positionsOf(laidOut, graph);
  performance.measure(LAYOUT_MEASURE, { start: started, detail: { executions: nodes.length } });
  return positions;
}
