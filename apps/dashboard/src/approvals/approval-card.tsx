import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type ReactNode, useState } from 'react';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { isUnauthorized, NOT_ABOUT_THE_KEY, useConnection } from '../connection/connection.tsx';
import { OVERVIEW_KEY } from '../overview/overview-query.ts';
import {
  APPROVALS_KEY,
  type Approval,
  type ApprovalStatus,
  type Decision,
  submitDecision,
} from './approval-queries.ts';

export type DecisionAnswer = Awaited<ReturnType<typeof submitDecision>>;

/** A decision as the reviewer reads it. */
export const DECISION_WORDS: Record<Decision, string> = {
  approved: 'Approved',
  rejected: 'Rejected',
  request_changes: 'Changes requested for',
};

/** An approval's status as a pill: the words carry the meaning, the colour supports them. */
const STATUS_LOOK: Record<ApprovalStatus, { kind: string; words: string }> = {
  pending: { kind: 'warn', words: 'pending' },
  approved: { kind: 'ok', words: 'approved' },
  rejected: { kind: 'bad', words: 'rejected' },
  request_changes: { kind: 'info', words: 'changes requested' },
  expired: { kind: 'bad', words: 'expired' },
  cancelled: { kind: 'idle', words: 'cancelled' },
};

function ApprovalBadge({ status }: { status: ApprovalStatus }) {
  const look = STATUS_LOOK[status];
  return <span className={`badge ${look.kind}`}>{look.words}</span>;
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Approve, reject or request changes, with words for the agent. */
function DecisionForm({
  approval,
  onDecided,
}: {
  approval: Approval;
  onDecided(answer: DecisionAnswer): void;
}) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const [feedback, setFeedback] = useState('');
  const decide = useMutation({
    // With approvals.webhook_secret set, the control plane takes only signed decisions and needs
    // no key on this route: its 401 is about the signature, which the browser cannot make.
    meta: { [NOT_ABOUT_THE_KEY]: true },
    mutationFn: (decision: Decision) =>
      submitDecision(client, approval.approval_request_id, decision, feedback),
    onSuccess: (answer) => {
      onDecided(answer);
      void queryClient.invalidateQueries({ queryKey: APPROVALS_KEY });
      void queryClient.invalidateQueries({ queryKey: OVERVIEW_KEY });
    },
  });
  const fieldId = `feedback-${approval.approval_request_id}`;
  const busy = decide.isPending;
  const label = (decision: Decision, idle: string, working: string) =>
    busy && decide.variables === decision ? working : idle;
  return (
    <form
      className="stack decision"
      aria-label={`Decide ${approval.approval_request_id}`}
      onSubmit={(event) => {
        event.preventDefault();
        decide.mutate('approved');
      }}
    >
      <label htmlFor={fieldId}>Feedback to the agent (optional)</label>
      <textarea
        id={fieldId}
        rows={2}
        maxLength={10_000}
        value={feedback}
        onChange={(event) => setFeedback(event.target.value)}
        placeholder="What to change, or why"
      />
      {decide.error ? <ProblemMessage error={decide.error} context="The decision was not recorded" /> : null}
      {isUnauthorized(decide.error) ? (
        <p className="field-error">
          This control plane takes only signed decisions (approvals.webhook_secret is set): decide in the
          review tool that holds the secret.
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {label('approved', 'Approve', 'Approving…')}
        </button>
        <button type="button" disabled={busy} onClick={() => decide.mutate('request_changes')}>
          {label('request_changes', 'Request changes', 'Sending…')}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => decide.mutate('rejected')}>
          {label('rejected', 'Reject', 'Rejecting…')}
        </button>
      </div>
    </form>
  );
}

/** One approval request: what waits, since when, until when, and (while pending) the decision. */
export function ApprovalCard({
  approval,
  onDecided,
}: {
  approval: Approval;
  onDecided(answer: DecisionAnswer): void;
}) {
  const titleId = `approval-${approval.approval_request_id}`;
  return (
    <article className="card approval" aria-labelledby={titleId}>
      <div className="page-head">
        <h2 id={titleId} className="mono">
          {approval.approval_request_id}
        </h2>
        <ApprovalBadge status={approval.status} />
      </div>
      <dl className="facts">
        <Fact label="Execution">
          <Link
            to="/executions/$executionId"
            params={{ executionId: approval.execution_id }}
            className="mono"
          >
            {approval.execution_id}
          </Link>
        </Fact>
        <Fact label="Target">
          <code>{approval.target}</code>
        </Fact>
        <Fact label="Node">
          <Link to="/nodes/$nodeId" params={{ nodeId: approval.node_id }} className="mono">
            {approval.node_id}
          </Link>
        </Fact>
        <Fact label="Requested">
          <RelativeTime iso={approval.requested_at} />
        </Fact>
        <Fact label={approval.status === 'pending' ? 'Expires' : 'Expiry'}>
          <RelativeTime iso={approval.expires_at} />
        </Fact>
        {approval.decided_at ? (
          <Fact label="Decided">
            <RelativeTime iso={approval.decided_at} />
          </Fact>
        ) : null}
        {approval.approval_request_url ? (
          <Fact label="Review page">
            <a href={approval.approval_request_url} rel="noreferrer noopener" target="_blank">
              {approval.approval_request_url}
            </a>
          </Fact>
        ) : null}
        {approval.callback ? (
          <Fact label="Delivery to the agent">
            {approval.callback.status ?? 'not yet'}
            {approval.callback.attempts > 0 ? `, ${approval.callback.attempts} attempts` : ''}
            {approval.callback.last_error ? ` (last: ${approval.callback.last_error})` : ''}
          </Fact>
        ) : null}
      </dl>
      {approval.feedback ? (
        <p>
          <strong>Feedback:</strong> {approval.feedback}
        </p>
      ) : null}
      {approval.status === 'pending' ? <DecisionForm approval={approval} onDecided={onDecided} /> : null}
    </article>
  );
}
