import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { createColumnHelper } from '@tanstack/react-table';
import { DataTable } from '../components/data-table.tsx';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { nodeQuery } from './node-queries.ts';
import { WeightEditor } from './weight-editor.tsx';

type NodeRecord = NonNullable<ReturnType<typeof useNodeRecord>['data']>;
type Instance = NodeRecord['instances'][number];
type NodeFunction = NodeRecord['reasoners'][number] | NodeRecord['skills'][number];

function useNodeRecord(nodeId: string) {
  const { client } = useConnection();
  return useQuery(nodeQuery(client, nodeId));
}

const column = createColumnHelper<Instance>();
const instanceColumns = [
  column.accessor('version', { header: 'Version', cell: (info) => <code>{info.getValue()}</code> }),
  column.accessor('lifecycle_status', {
    header: 'Status',
    cell: (info) => <StatusBadge status={info.getValue()} />,
  }),
  column.accessor('admin_state', { header: 'Admin state' }),
  column.accessor('traffic_weight', { header: 'Weight' }),
  column.accessor('routable', { header: 'Routable', cell: (info) => (info.getValue() ? 'yes' : 'no') }),
  column.display({
    id: 'health',
    header: 'Health check',
    cell: ({ row }) => {
      const health = row.original.health;
      if (health.last_check_ok === null) return <span className="muted">not checked yet</span>;
      return health.last_check_ok ? (
        <span>
          ok <RelativeTime iso={health.last_check_at} />
        </span>
      ) : (
        <span>
          failing ({health.consecutive_failures}): {health.last_check_error ?? health.last_check_status_code}
        </span>
      );
    },
  }),
  column.accessor('last_heartbeat', {
    header: 'Last heartbeat',
    cell: (info) => <RelativeTime iso={info.getValue()} />,
  }),
  column.accessor('observed_heartbeat_interval_seconds', {
    header: 'Heartbeat every',
    cell: (info) => {
      const seconds = info.getValue();
      return seconds === null ? (
        <span className="muted">not yet known</span>
      ) : (
        `${Math.round(seconds * 10) / 10} s`
      );
    },
  }),
  column.accessor('lease_expires_at', {
    header: 'Lease ends',
    cell: (info) => <RelativeTime iso={info.getValue()} />,
  }),
  column.accessor('base_url', { header: 'URL', cell: (info) => <code>{info.getValue()}</code> }),
];

function FunctionDetails({ fn, kind }: { fn: NodeFunction; kind: 'reasoner' | 'skill' }) {
  return (
    <details className="card">
      <summary>
        <code>{fn.id}</code> <span className="muted">{kind}</span>
        {fn.description ? <span className="muted"> — {fn.description}</span> : null}
      </summary>
      {fn.tags.length > 0 ? <p className="muted">Tags: {fn.tags.join(', ')}</p> : null}
      <JsonBlock title={`Input schema of ${fn.id}`} value={fn.input_schema ?? null} />
      <JsonBlock title={`Output schema of ${fn.id}`} value={fn.output_schema ?? null} />
    </details>
  );
}

/** One node: its state, every instance (version, weight, health, heartbeat) and its functions. */
export function NodePage() {
  const { nodeId } = useParams({ from: '/nodes/$nodeId' });
  const node = useNodeRecord(nodeId);
  return (
    <>
      <p>
        <Link to="/nodes">← Nodes</Link>
      </p>
      <div className="page-head">
        <h1 className="mono">{nodeId}</h1>
        {node.data ? <StatusBadge status={node.data.lifecycle_status} /> : null}
      </div>
      {node.error ? <ProblemMessage error={node.error} context={`Could not load node ${nodeId}`} /> : null}
      {node.isPending ? <p className="muted">Loading node…</p> : null}
      {node.data ? (
        <>
          <dl className="facts card">
            <div>
              <dt>Version</dt>
              <dd>
                <code>{node.data.version}</code>
              </dd>
            </div>
            <div>
              <dt>Last heartbeat</dt>
              <dd>
                <RelativeTime iso={node.data.last_heartbeat} />
              </dd>
            </div>
            <div>
              <dt>Registered</dt>
              <dd>
                <RelativeTime iso={node.data.registered_at} />
              </dd>
            </div>
            <div>
              <dt>Status reason</dt>
              <dd>{node.data.status_reason ?? '—'}</dd>
            </div>
            <div>
              <dt>Tags</dt>
              <dd>{node.data.tags.length > 0 ? node.data.tags.join(', ') : '—'}</dd>
            </div>
            <div>
              <dt>Executions</dt>
              <dd>
                <Link to="/executions" search={{ node_id: nodeId }}>
                  Executions on this node
                </Link>
              </dd>
            </div>
          </dl>
          <h2>Instances</h2>
          <DataTable
            data={node.data.instances}
            columns={instanceColumns}
            label="Instances"
            rowId={(instance) => `${instance.version} ${instance.base_url}`}
          />
          <WeightEditor
            nodeId={nodeId}
            versions={node.data.instances.map((instance) => ({
              version: instance.version,
              weight: instance.traffic_weight,
              routable: instance.routable,
            }))}
          />
          <h2>Functions</h2>
          {node.data.reasoners.length + node.data.skills.length === 0 ? (
            <p className="muted">This node registered no reasoners or skills.</p>
          ) : null}
          {node.data.reasoners.map((fn) => (
            <FunctionDetails key={`r ${fn.id}`} fn={fn} kind="reasoner" />
          ))}
          {node.data.skills.map((fn) => (
            <FunctionDetails key={`s ${fn.id}`} fn={fn} kind="skill" />
          ))}
        </>
      ) : null}
    </>
  );
}
