import {
  Background,
  Controls,
  type Edge,
  getViewportForBounds,
  type NodeHandle,
  ReactFlow,
  Position as Side,
  type Viewport,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useNavigate } from '@tanstack/react-router';
import { type MouseEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ProblemMessage } from '../components/problem-message.tsx';
import { NODE_HEIGHT, NODE_WIDTH, type Position } from './dag-layout-graph.ts';
import { layoutDag } from './elk-layout.ts';
import { type ExecutionNode, ExecutionNodeView } from './execution-node.tsx';
import type { DagNode } from './workflow-queries.ts';

const NODE_TYPES = { execution: ExecutionNodeView };

/** Past this many boxes only those in view are rendered: panning stays smooth on big workflows. */
const RENDER_VISIBLE_ONLY_FROM = 200;

const MIN_ZOOM = 0.05;
const MAX_FIT_ZOOM = 1;
/** Below this zoom a box's text is too small to read: a graph that only fits smaller opens at… */
const LEGIBLE_ZOOM = 0.5;
/** …this zoom instead, at its first execution, and the controls' "fit view" shows all of it. */
const OPEN_ZOOM = 0.75;

/**
 * Every box has the same size and its two handles sit mid-left and mid-right (xyflow's 6 px
 * handle, centred on the border), so xyflow is told both up front instead of measuring each box
 * in the page before it shows the boxes and draws the edges.
 */
const HANDLE = 6;
const HANDLES: NodeHandle[] = [
  {
    type: 'target',
    position: Side.Left,
    x: -HANDLE / 2,
    y: (NODE_HEIGHT - HANDLE) / 2,
    width: HANDLE,
    height: HANDLE,
  },
  {
    type: 'source',
    position: Side.Right,
    x: NODE_WIDTH - HANDLE / 2,
    y: (NODE_HEIGHT - HANDLE) / 2,
    width: HANDLE,
    height: HANDLE,
  },
];
const SIZE = { width: NODE_WIDTH, height: NODE_HEIGHT };

interface Layout {
  /** The graph's shape the positions are for: execution ids and edges. */
  shape: string;
  positions: Map<string, Position>;
  /** Where the view opens, and the frame's size it was fitted to (unknown before it is in the page). */
  view: { viewport: Viewport; width: number; height: number } | undefined;
}

/**
 * The view the graph opens at: the whole graph fitted into the frame (at most at full size), as
 * xyflow's fitView would place it, when its boxes are still legible so; a larger graph opens at a
 * legible size on its first execution (the root, at the left, centred). Known before the first
 * render, so xyflow renders the boxes in view once instead of rendering, measuring and rendering
 * again after fitting.
 */
function fittedView(
  positions: Map<string, Position>,
  first: string | undefined,
  frame: HTMLElement | null,
): Layout['view'] {
  if (!frame || positions.size === 0 || frame.clientWidth === 0 || frame.clientHeight === 0) return undefined;
  let left = Number.POSITIVE_INFINITY;
  let top = Number.POSITIVE_INFINITY;
  let right = Number.NEGATIVE_INFINITY;
  let bottom = Number.NEGATIVE_INFINITY;
  for (const { x, y } of positions.values()) {
    left = Math.min(left, x);
    top = Math.min(top, y);
    right = Math.max(right, x + NODE_WIDTH);
    bottom = Math.max(bottom, y + NODE_HEIGHT);
  }
  const bounds = { x: left, y: top, width: right - left, height: bottom - top };
  const width = frame.clientWidth;
  const height = frame.clientHeight;
  const fitted = getViewportForBounds(bounds, width, height, MIN_ZOOM, MAX_FIT_ZOOM, 0.1);
  const start = first === undefined ? undefined : positions.get(first);
  if (fitted.zoom >= LEGIBLE_ZOOM || !start) return { viewport: fitted, width, height };
  const viewport = {
    x: Math.min(width * 0.05, 24) - start.x * OPEN_ZOOM,
    y: height / 2 - (start.y + NODE_HEIGHT / 2) * OPEN_ZOOM,
    zoom: OPEN_ZOOM,
  };
  return { viewport, width, height };
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
  const frame = useRef<HTMLDivElement>(null);
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
        if (current)
          setLayout({ shape, positions, view: fittedView(positions, nodes[0]?.execution_id, frame.current) });
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
          ...SIZE,
          measured: SIZE,
          handles: HANDLES,
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
    <div className="dag-graph" data-testid="workflow-graph" aria-busy={layout?.shape !== shape} ref={frame}>
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
          fitView={layout.view === undefined}
          defaultViewport={layout.view?.viewport}
          width={layout.view?.width}
          height={layout.view?.height}
          fitViewOptions={{ maxZoom: MAX_FIT_ZOOM }}
          minZoom={MIN_ZOOM}
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
