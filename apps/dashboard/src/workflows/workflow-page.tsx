import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useEffect, useMemo } from 'react';
import './workflows.css';
import { ProblemMessage } from '../components/problem-message.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { DagGraph } from './dag-graph.tsx';
import { warmUpLayout } from './elk-layout.ts';
import { GanttTimeline } from './gantt-timeline.tsx';
import { useWorkflowLive } from './use-workflow-live.ts';
import { type DagNode, TERMINAL, workflowDagQuery } from './workflow-queries.ts';

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
  const dag = useQuery(workflowDagQuery(client, workflowId));
  useEffect(() => warmUpLayout(), []);
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
              <DagGraph nodes={graphNodes} edges={graphEdges} />
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
