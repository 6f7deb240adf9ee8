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

/** One ELK worker for the tab, started on the first layout (a workflow page opened). */
function layoutEngine(): InstanceType<typeof ELK> {
  elk ??= new ELK({ workerFactory: () => new ElkWorker(), algorithms: ['layered'] });
  return elk;
}

/**
 * Starts the worker and runs a two-box layout, so ELK's start-up (loading and compiling its
 * 1.4 MB of code, registering its algorithms) overlaps the page's fetch of the DAG instead of
 * adding to the first real layout.
 */
export function warmUpLayout(): void {
  void layoutDag(
    [
      { id: 'warm-up-a', depth: 1 },
      { id: 'warm-up-b', depth: 2 },
    ],
    [{ from: 'warm-up-a', to: 'warm-up-b' }],
  ).catch(() => {});
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
  const laidOut = await layoutEngine().layout(elkGraphOf(nodes, edges));
  const positions = positionsOf(laidOut);
  performance.measure(LAYOUT_MEASURE, { start: started, detail: { executions: nodes.length } });
  return positions;
}
