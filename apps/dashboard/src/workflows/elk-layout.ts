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

/** Positions of every execution's box in the workflow's DAG, laid out by ELK in a worker. */
export async function layoutDag(
  nodes: readonly DagNodeInput[],
  edges: readonly DagEdgeInput[],
): Promise<Map<string, Position>> {
  const laidOut = await layoutEngine().layout(elkGraphOf(nodes, edges));
  return positionsOf(laidOut);
}
