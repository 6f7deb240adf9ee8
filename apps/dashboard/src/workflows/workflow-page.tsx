import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useEffect, useMemo, useState } from 'react';
import './workflows.css';
import { ProblemMessage } from '../components/problem-message.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import type { DagGraph as DagGraphComponent } from './dag-graph.tsx';
import { startLayoutEngine } from './elk-layout.ts';
import { GanttTimeline } from './gantt-timeline.tsx';
import { SharePanel } from './share-panel.tsx';
import { useWorkflowLive } from './use-workflow-live.ts';
import { type DagNode, TERMINAL, workflowDagQuery } from './workflow-queries.ts';

/**
 * The graph's code (xyflow, about 60 kB compressed) starts loading with this page's and is not
 * waited for: the page shows and fetches the DAG meanwhile. Not React.lazy: React holds a
 * suspended part's content back for up to 300 ms after its fallback showed, which would delay
 * the graph by that much.
 */
const dagGraphModule = import('./dag-graph.tsx');
type DagGraphView = typeof DagGraphComponent;

function useDagGraph(): DagGraphView | undefined {
  const [loaded, setLoaded] = useState<{ DagGraph: DagGraphView }>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let current = true;
    dagGraphModule.then(
      (module) => current && setLoaded({ DagGraph: module.DagGraph }),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, []);
  if (error) throw error;
  return loaded?.DagGraph;
}

/**
 * The graph draws at most this many executions (the oldest, as the API lists them): ELK lays out
 * 500 in well under a second, and a graph of thousands of boxes is no longer readable anyway. The
 * timeline and the executions list show every one.
 */
export const GRAPH_LIMIT = 1_000;

function countByStatus(nodes: DagNode[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const node of nodes) counts.set(node.status, (counts.get(node.status) ?? 0) + 1);
  return [...counts.entries()];
}

/**
 * One workflow run: its executions as a DAG coloured by status, and a timeline of when each ran.
 * While any execution is not terminal it follows the workflow's events and redraws.
 */
export function WorkflowPage() {
  const { workflowId } = useParams({ from: '/workflows/$workflowId' });
  const { client } = useConnection();
  const DagGraph = useDagGraph();
  const dag = useQuery(workflowDagQuery(client, workflowId));
  useEffect(() => startLayoutEngine(), []);
  const nodes = dag.data?.nodes;
  const active = nodes?.some((node) => !TERMINAL.has(node.status)) ?? false;
  useWorkflowLive(workflowId, active);

  const graphNodes = useMemo(() => nodes?.slice(0, GRAPH_LIMIT) ?? [], [nodes]);
  const graphEdges = useMemo(() => {
    const shown = new Set(graphNodes.map((node) => node.execution_id));
    return (dag.data?.edges ?? []).filter((edge) => shown.has(edge.from) && shown.has(edge.to));
  }, [graphNodes, dag.data?.edges]);

  return (
    <>
      <p>
        <Link to="/workflows">← Workflows</Link>
      </p>
      <div className="page-head">
        <h1 className="mono">{workflowId}</h1>
        <div className="actions">
          <Link to="/executions" search={{ workflow_id: workflowId }}>
            List its executions
          </Link>
        </div>
      </div>
      <SharePanel workflowId={workflowId} />
      {dag.error ? (
        <ProblemMessage error={dag.error} context={`Could not load workflow ${workflowId}`} />
      ) : null}
      {dag.isPending ? <p className="muted">Loading workflow…</p> : null}
      {dag.data && nodes ? (
        <>
          <p className="workflow-summary" data-testid="workflow-summary">
            <span>
              {nodes.length} {nodes.length === 1 ? 'execution' : 'executions'}, {dag.data.depth}{' '}
              {dag.data.depth === 1 ? 'level' : 'levels'} deep
              {active ? ', still running' : ', finished'}:
            </span>{' '}
            {countByStatus(nodes).map(([status, count]) => (
              <span key={status} className="workflow-count">
                <StatusBadge status={status} /> {count}
              </span>
            ))}
          </p>
          {dag.data.truncated ? (
            <p className="notice" role="status">
              This workflow has more executions than the API answers in one graph; the oldest {nodes.length}{' '}
              are shown. The executions list has every one.
            </p>
          ) : null}
          {nodes.length > GRAPH_LIMIT ? (
            <p className="notice" role="status">
              The graph shows the oldest {GRAPH_LIMIT} of {nodes.length} executions; the timeline shows them
              all.
            </p>
          ) : null}
          <div className="workflow-views">
            <section aria-labelledby="workflow-graph-heading" className="workflow-graph-section">
              <h2 id="workflow-graph-heading">Graph</h2>
              {DagGraph ? (
                <DagGraph nodes={graphNodes} edges={graphEdges} />
              ) : (
                <div className="dag-graph" data-testid="workflow-graph" aria-busy="true">
                  <p className="muted dag-graph-wait">Loading the graph…</p>
                </div>
              )}
            </section>
            <section aria-labelledby="workflow-timeline-heading" className="workflow-timeline-section">
              <h2 id="workflow-timeline-heading">Timeline</h2>
              <GanttTimeline nodes={nodes} />
            </section>
          </div>
        </>
      ) : null}
    </>
  );
}
