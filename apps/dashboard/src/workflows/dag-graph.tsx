import { Background, Controls, type Edge, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useNavigate } from '@tanstack/react-router';
import { type MouseEvent, useCallback, useEffect, useMemo, useState } from 'react';
import { ProblemMessage } from '../components/problem-message.tsx';
import type { Position } from './dag-layout-graph.ts';
import { layoutDag } from './elk-layout.ts';
import { type ExecutionNode, ExecutionNodeView } from './execution-node.tsx';
import type { DagNode } from './workflow-queries.ts';

const NODE_TYPES = { execution: ExecutionNodeView };

/** Past this many boxes only those in view are rendered: panning stays smooth on big workflows. */
const RENDER_VISIBLE_ONLY_FROM = 200;

interface Layout {
  /** The graph's shape the positions are for: execution ids and edges. */
  shape: string;
  positions: Map<string, Position>;
}

/**
 * The workflow's executions as a graph laid out by ELK (layered, parent left of its children).
 * A status change keeps the layout; only a new execution or edge lays the graph out again.
 */
export function DagGraph({ nodes, edges }: { nodes: DagNode[]; edges: { from: string; to: string }[] }) {
  const shape = useMemo(
    () =>
      `${nodes.map((node) => `${node.execution_id}@${node.depth}`).join(',')}|${edges.map((edge) => `${edge.from}>${edge.to}`).join(',')}`,
    [nodes, edges],
  );
  const [layout, setLayout] = useState<Layout | undefined>();
  const [error, setError] = useState<unknown>();
  const navigate = useNavigate();
  // Each box is a link, which handles its own clicks; this catches a click on the box's frame.
  // Having a click handler is also what makes xyflow let pointer events reach the boxes at all
  // when they can be neither dragged nor selected.
  const openExecution = useCallback(
    (event: MouseEvent, node: ExecutionNode) => {
      if (event.defaultPrevented) return;
      void navigate({ to: '/executions/$executionId', params: { executionId: node.id } });
    },
    [navigate],
  );

  // The shape string stands for ids and edges: the same shape needs no new layout.
  // biome-ignore lint/correctness/useExhaustiveDependencies: shape changes whenever the nodes' ids and depths or the edges do
  useEffect(() => {
    let current = true;
    layoutDag(
      nodes.map((node) => ({ id: node.execution_id, depth: node.depth })),
      edges,
    ).then(
      (positions) => {
        if (current) setLayout({ shape, positions });
      },
      (failure: unknown) => {
        if (current) setError(failure);
      },
    );
    return () => {
      current = false;
    };
  }, [shape]);

  const flowNodes = useMemo<ExecutionNode[]>(() => {
    if (!layout) return [];
    return nodes.flatMap((node) => {
      const position = layout.positions.get(node.execution_id);
      if (!position) return [];
      return [
        {
          id: node.execution_id,
          type: 'execution' as const,
          position,
          draggable: false,
          selectable: false,
          connectable: false,
          focusable: false,
          data: {
            executionId: node.execution_id,
            target: node.target,
            status: node.status,
            durationMs: node.duration_ms,
            startedAt: node.started_at,
          },
        },
      ];
    });
  }, [layout, nodes]);

  const flowEdges = useMemo<Edge[]>(
    () =>
      edges.map((edge) => ({
        id: `${edge.from}->${edge.to}`,
        source: edge.from,
        target: edge.to,
        type: 'smoothstep',
        focusable: false,
        selectable: false,
      })),
    [edges],
  );

  if (error) return <ProblemMessage error={error} context="Could not lay out the workflow graph" />;
  return (
    <div className="dag-graph" data-testid="workflow-graph" aria-busy={layout?.shape !== shape}>
      {layout ? (
        <ReactFlow
          nodes={flowNodes}
          edges={flowEdges}
          nodeTypes={NODE_TYPES}
          nodesDraggable={false}
          nodesConnectable={false}
          nodesFocusable={false}
          edgesFocusable={false}
          elementsSelectable={false}
          onNodeClick={openExecution}
          onlyRenderVisibleElements={nodes.length >= RENDER_VISIBLE_ONLY_FROM}
          fitView
          fitViewOptions={{ maxZoom: 1 }}
          minZoom={0.05}
          colorMode="system"
          aria-label="Workflow graph"
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      ) : (
        <p className="muted dag-graph-wait">Laying out {nodes.length} executions…</p>
      )}
    </div>
  );
}
