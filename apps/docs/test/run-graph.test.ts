import { describe, expect, it } from 'vitest';
import { RunBundleSchema } from '../server/shares/run-bundle.ts';
import { MAX_GRAPH_NODES } from '../server/shares/run-graph.ts';
import { runShareView } from '../server/shares/run-share-view.ts';

/** The page view of a published fan-out: one root calling every other execution. */
function fanOut(count: number) {
  const nodes = Array.from({ length: count }, (_, i) => ({
    execution_id: `ex_${i}`,
    target: `agent-${i % 3}.step`,
    status: i === 1 ? 'failed' : 'succeeded',
    duration_ms: 10 * i,
  }));
  const bundle = RunBundleSchema.parse({
    version: 1,
    workflow_id: 'wf_fan',
    generated_at: '2026-11-27T09:00:00Z',
    totals: {},
    nodes,
    edges: nodes.slice(1).map((node) => ({ from: 'ex_0', to: node.execution_id })),
  });
  return runShareView({
    id: 'run_x',
    url: 'http://docs/s/run_x',
    created_at: '2026-11-27T09:00:01Z',
    bundle,
  });
}

describe('the graph of a shared run', () => {
  it('lays out one box per execution, inside the drawing, without two boxes overlapping', () => {
    const { graph, nodes } = fanOut(12);
    expect(graph!.nodes.map((box) => box.anchor)).toEqual(nodes.map((node) => node.anchor));
    expect(graph!.edges).toHaveLength(11);
    for (const box of graph!.nodes) {
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(graph!.width);
      expect(box.y + box.height).toBeLessThanOrEqual(graph!.height);
    }
    const [root, ...children] = graph!.nodes;
    for (const child of children) expect(child.y).toBeGreaterThan(root!.y + root!.height);
    for (const a of children) {
      for (const b of children) {
        if (a !== b)
          expect(a.x + a.width <= b.x || b.x + b.width <= a.x, `${a.anchor} ${b.anchor}`).toBe(true);
      }
    }
    expect(graph!.nodes[1]).toMatchObject({ status: 'failed', mark: '✗', detail: 'failed · 10 ms' });
  });

  it('draws executions whose ids are names Object.prototype has (valueOf, __proto__, constructor)', () => {
    const ids = ['valueOf', '__proto__', 'constructor'];
    const bundle = RunBundleSchema.parse({
      version: 1,
      workflow_id: 'wf_proto',
      generated_at: '2026-11-27T09:00:00Z',
      totals: {},
      nodes: ids.map((execution_id) => ({
        execution_id,
        target: 'a.f',
        status: 'succeeded',
        duration_ms: 1,
      })),
      edges: [
        { from: 'valueOf', to: '__proto__' },
        { from: 'valueOf', to: 'constructor' },
      ],
    });
    const { graph } = runShareView({
      id: 'run_p',
      url: 'http://docs/s/run_p',
      created_at: '2026-11-27T09:00:01Z',
      bundle,
    });
    expect(graph!.nodes).toHaveLength(3);
    expect(graph!.edges).toHaveLength(2);
    expect(graph!.nodes[1]!.y).toBeGreaterThan(graph!.nodes[0]!.y);
  });

  it('cuts a long name to fit its box and keeps it whole in the label', () => {
    const view = fanOut(2);
    const long = 'a_function_name_far_longer_than_any_box_is_wide';
    const bundle = RunBundleSchema.parse({
      version: 1,
      workflow_id: 'wf_long',
      generated_at: '2026-11-27T09:00:00Z',
      totals: {},
      nodes: [{ execution_id: 'ex_long', target: `agent.${long}`, status: 'running' }],
      edges: [],
    });
    const box = runShareView({ ...view, id: 'run_y', url: 'u', created_at: '2026-11-27T09:00:01Z', bundle })
      .graph!.nodes[0]!;
    expect(box.func.endsWith('…')).toBe(true);
    expect(box.func.length).toBeLessThan(long.length);
    expect(box.label).toContain(long);
    expect(box.detail).toBe('running · in progress');
  });

  it(`lists a run of more than ${MAX_GRAPH_NODES} executions without drawing it`, () => {
    const view = fanOut(MAX_GRAPH_NODES + 1);
    expect(view.graph).toBeUndefined();
    expect(view.graphOmitted).toBe(
      `The run has ${MAX_GRAPH_NODES + 1} executions; runs of up to ${MAX_GRAPH_NODES} are drawn as a graph. Each execution is listed below.`,
    );
    expect(view.nodes).toHaveLength(MAX_GRAPH_NODES + 1);
    expect(fanOut(MAX_GRAPH_NODES).graph!.nodes).toHaveLength(MAX_GRAPH_NODES);
  });
});
