import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { createColumnHelper } from '@tanstack/react-table';
import { DataTable } from '../components/data-table.tsx';
import { EmptyState, TutorialLink } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { type NodeSummary, nodesQuery } from './node-queries.ts';

const column = createColumnHelper<NodeSummary>();

const columns = [
  column.accessor('node_id', {
    header: 'Node',
    cell: (info) => (
      <Link to="/nodes/$nodeId" params={{ nodeId: info.getValue() }} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  column.accessor('lifecycle_status', {
    header: 'Status',
    cell: (info) => <StatusBadge status={info.getValue()} />,
  }),
  column.display({
    id: 'versions',
    header: 'Versions',
    cell: ({ row }) => [...new Set(row.original.instances.map((i) => i.version))].join(', '),
  }),
  column.display({
    id: 'functions',
    header: 'Functions',
    cell: ({ row }) => row.original.reasoners.length + row.original.skills.length,
  }),
  column.accessor('last_heartbeat', {
    header: 'Last heartbeat',
    cell: (info) => <RelativeTime iso={info.getValue()} />,
  }),
];

/** Every registered node, its state and heartbeat; node events refresh it (see live-refresh.ts). */
export function NodesPage() {
  const { client } = useConnection();
  const nodes = useQuery(nodesQuery(client));
  return (
    <>
      <div className="page-head">
        <h1>Nodes</h1>
        {nodes.data ? <span className="muted">{nodes.data.length} registered</span> : null}
      </div>
      {nodes.error ? <ProblemMessage error={nodes.error} context="Could not list the nodes" /> : null}
      {nodes.isPending ? <p className="muted">Loading nodes…</p> : null}
      {nodes.data && nodes.data.length === 0 ? (
        <EmptyState title="No node has registered yet">
          <p>Start an agent pointed at this control plane and it appears here as soon as it registers.</p>
          <p>
            <TutorialLink />
          </p>
        </EmptyState>
      ) : null}
      {nodes.data && nodes.data.length > 0 ? (
        <DataTable data={nodes.data} columns={columns} label="Nodes" rowId={(node) => node.node_id} />
      ) : null}
    </>
  );
}
