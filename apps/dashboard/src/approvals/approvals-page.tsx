import './approvals.css';
import { useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useDocsUrl } from '../components/docs-url.ts';
import { EmptyState } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { ApprovalCard, DECISION_WORDS, type DecisionAnswer } from './approval-card.tsx';
import {
  APPROVAL_STATUSES,
  APPROVALS_KEY,
  type ApprovalStatus,
  approvalListQuery,
} from './approval-queries.ts';

/**
 * Execution events that change the list: an execution pausing for approval, a decision taking
 * effect, and an execution ending (its open request is then cancelled).
 */
const APPROVAL_EVENTS = new Set(['execution.waiting', 'execution.approval_resolved', 'execution.completed']);

const STATUS_WORDS: Record<ApprovalStatus, string> = {
  pending: 'pending',
  approved: 'approved',
  rejected: 'rejected',
  request_changes: 'changes requested',
  expired: 'expired',
  cancelled: 'cancelled',
};

/** What the last decision did, said once the list has moved on without the request. */
function DecisionNote({ answer }: { answer: DecisionAnswer }) {
  const decision = answer.decision && answer.decision !== 'expired' ? answer.decision : 'approved';
  return (
    <p>
      {DECISION_WORDS[decision]} <code>{answer.approval_request_id}</code>. Execution{' '}
      <Link to="/executions/$executionId" params={{ executionId: answer.execution_id }} className="mono">
        {answer.execution_id}
      </Link>{' '}
      is {answer.execution_status} now; the decision goes to its agent, which decides what follows.
    </p>
  );
}

/**
 * Approval requests of executions that paused for a person (pending first of all), each with its
 * execution, when it was asked and when it expires, and Approve / Request changes / Reject with
 * feedback for the agent. Execution events refresh it.
 */
export function ApprovalsPage() {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const docs = useDocsUrl();
  const [status, setStatus] = useState<ApprovalStatus | ''>('pending');
  const [lastDecision, setLastDecision] = useState<DecisionAnswer | null>(null);
  const list = useInfiniteQuery(approvalListQuery(client, status));
  useLiveEvents((event) => {
    if (event.stream === 'executions' && APPROVAL_EVENTS.has(event.event))
      refreshOnEvent(queryClient, APPROVALS_KEY);
  });
  const approvals = list.data?.pages.flatMap((page) => page.approvals) ?? [];
  const shown = status ? STATUS_WORDS[status] : 'any status';

  return (
    <>
      <div className="page-head">
        <h1>Approvals</h1>
        {list.data ? (
          <span className="muted">
            {approvals.length}
            {list.hasNextPage ? '+' : ''} {status ? STATUS_WORDS[status] : 'in all'}
          </span>
        ) : null}
      </div>
      <div className="filters approval-filters">
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value as ApprovalStatus | '')}>
            {APPROVAL_STATUSES.map((value) => (
              <option key={value} value={value}>
                {STATUS_WORDS[value]}
              </option>
            ))}
            <option value="">any status</option>
          </select>
        </label>
      </div>
      <div role="status" className="decision-note">
        {lastDecision ? <DecisionNote answer={lastDecision} /> : null}
      </div>
      {list.error ? (
        <ProblemMessage error={list.error} context="Could not read the approval requests" />
      ) : null}
      {list.isPending ? <p className="muted">Loading approval requests…</p> : null}
      {list.data && approvals.length === 0 ? (
        status === 'pending' ? (
          <EmptyState title="No approval is waiting">
            <p>
              An agent that pauses for a person’s decision (its SDK’s pause call) shows its request here to
              approve, reject or send back with feedback.
            </p>
            <p>
              <a href={`${docs}/docs/concepts/approvals`}>How approvals work</a>
            </p>
          </EmptyState>
        ) : (
          <EmptyState title={`No approval request is ${shown}`}>
            <p>Choose another status to see other requests.</p>
          </EmptyState>
        )
      ) : null}
      <div className="approvals">
        {approvals.map((approval) => (
          <ApprovalCard key={approval.approval_request_id} approval={approval} onDecided={setLastDecision} />
        ))}
      </div>
      {list.hasNextPage ? (
        <div className="actions">
          <button type="button" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
            {list.isFetchingNextPage ? 'Loading…' : 'Show older requests'}
          </button>
        </div>
      ) : null}
    </>
  );
}
