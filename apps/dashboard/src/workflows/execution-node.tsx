import { Link } from '@tanstack/react-router';
import { Handle, type Node, type NodeProps, Position } from '@xyflow/react';
import { memo } from 'react';
import { StatusBadge } from '../components/status-badge.tsx';
import { formatDuration } from './duration.ts';
import { useTickingNow } from './use-ticking-now.ts';
import { TERMINAL } from './workflow-queries.ts';

export interface ExecutionNodeData extends Record<string, unknown> {
  executionId: string;
  target: string;
  status: string;
  durationMs: number | null;
  startedAt: string | null;
}

export type ExecutionNode = Node<ExecutionNodeData, 'execution'>;

/** How long it ran, or has been running; queued ones have not started. */
function Elapsed({ data }: { data: ExecutionNodeData }) {
  const running = !TERMINAL.has(data.status) && data.startedAt !== null;
  const now = useTickingNow(running);
  if (data.durationMs !== null) return <>{formatDuration(data.durationMs)}</>;
  if (data.startedAt === null) return <>not started</>;
  if (!running) return <>—</>;
  return <>{formatDuration(Math.max(0, now - Date.parse(data.startedAt)))} so far</>;
}

/**
 * One execution in the DAG: target, status as a word (colour only backs it up) and duration. The
 * whole box is a link to the execution, so a click or Tab + Enter opens it; xyflow's own node
 * focus is off, leaving one tab stop per execution.
 */
export const ExecutionNodeView = memo(function ExecutionNodeView({ data }: NodeProps<ExecutionNode>) {
  return (
    <>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <Link
        to="/executions/$executionId"
        params={{ executionId: data.executionId }}
        className="dag-node nopan"
        data-status={data.status}
        data-execution-id={data.executionId}
      >
        <span className="dag-node-target" title={data.target}>
          {data.target}
        </span>
        <span className="dag-node-facts">
          <StatusBadge status={data.status} />
          <span className="dag-node-duration">
            <Elapsed data={data} />
          </span>
        </span>
      </Link>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </>
  );
});
