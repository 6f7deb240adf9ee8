import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import './workflows.css';
import { EmptyState, TutorialLink } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { RECENT_SCAN, recentWorkflowsQuery, WORKFLOWS_KEY } from './workflow-queries.ts';

/** Open a workflow by id, or one of those with the newest activity. */
export function WorkflowsPage() {
  const { client } = useConnection();
  const navigate = useNavigate();
  const recent = useQuery(recentWorkflowsQuery(client));
  const queryClient = useQueryClient();
  // A started or finished execution may be a new workflow, or change whether one is running.
  useLiveEvents((event) => {
    if (event.stream === 'executions') refreshOnEvent(queryClient, [...WORKFLOWS_KEY, 'recent']);
  });
  const [id, setId] = useState('');

  function open(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const workflowId = id.trim();
    if (workflowId) void navigate({ to: '/workflows/$workflowId', params: { workflowId } });
  }

  return (
    <>
      <h1>Workflows</h1>
      <form className="filters" onSubmit={open} aria-label="Open a workflow">
        <label>
          Workflow id
          <input
            name="workflow_id"
            value={id}
            onChange={(event) => setId(event.target.value)}
            placeholder="X-Workflow-ID, or a run id"
            required
            maxLength={256}
          />
        </label>
        <div className="actions">
          <button type="submit" className="primary">
            Open
          </button>
        </div>
      </form>
      <h2>Recent workflows</h2>
      {recent.error ? (
        <ProblemMessage error={recent.error} context="Could not read recent executions" />
      ) : null}
      {recent.isPending ? <p className="muted">Loading recent workflows…</p> : null}
      {recent.data && recent.data.length === 0 ? (
        <EmptyState title="No executions yet">
          <p>
            A workflow appears here once an agent runs; calls an agent makes from inside one join its
            workflow.
          </p>
          <TutorialLink />
        </EmptyState>
      ) : null}
      {recent.data && recent.data.length > 0 ? (
        <>
          <ul className="workflow-list" aria-label="Recent workflows">
            {recent.data.map((workflow) => (
              <li key={workflow.workflowId} className="card">
                <Link
                  to="/workflows/$workflowId"
                  params={{ workflowId: workflow.workflowId }}
                  className="mono workflow-link"
                >
                  {workflow.workflowId}
                </Link>
                <span className="workflow-facts">
                  <code>{workflow.target}</code>
                  {workflow.running ? <StatusBadge status="running" /> : null}
                  {workflow.failed ? <StatusBadge status="failed" /> : null}
                  <span className="muted">
                    {workflow.executions} recent {workflow.executions === 1 ? 'execution' : 'executions'},
                    last <RelativeTime iso={workflow.lastCreatedAt} />
                  </span>
                </span>
              </li>
            ))}
          </ul>
          <p className="muted">From the newest {RECENT_SCAN} executions.</p>
        </>
      ) : null}
    </>
  );
}
