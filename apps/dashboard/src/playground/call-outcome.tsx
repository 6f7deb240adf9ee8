import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { EXECUTIONS_KEY, executionQuery } from '../executions/execution-queries.ts';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { type CallOutcome, failedExecutionOf } from './call-function.ts';
import type { FieldError } from './server-field-errors.ts';

const FINISHED = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);

function ExecutionLink({ executionId }: { executionId: string }) {
  return (
    <Link to="/executions/$executionId" params={{ executionId }} className="mono">
      {executionId}
    </Link>
  );
}

function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : ` in ${value} ms`;
}

/** A queued execution, followed live until it ends: its status, then its result or error. */
function QueuedExecution({ executionId }: { executionId: string }) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const execution = useQuery({
    ...executionQuery(client, executionId),
    // Events move the status; reading again now and then while it runs also covers an event the
    // page missed (the stream reconnecting, or the execution ending before the page listened).
    refetchInterval: (query) => (query.state.data && FINISHED.has(query.state.data.status) ? false : 3_000),
  });
  useLiveEvents((event) => {
    if (event.stream === 'executions' && event.data.execution_id === executionId)
      refreshOnEvent(queryClient, [...EXECUTIONS_KEY, 'one', executionId]);
  });
  const record = execution.data;
  return (
    <>
      <p>
        Queued as execution <ExecutionLink executionId={executionId} />
        {record ? (
          <>
            , now <StatusBadge status={record.status} />
            {FINISHED.has(record.status) ? ms(record.duration_ms) : null}
          </>
        ) : null}
      </p>
      {execution.error ? (
        <ProblemMessage error={execution.error} context="Could not follow the execution" />
      ) : null}
      {record?.error ? (
        <div className="problem" role="alert">
          <p>
            <strong>The execution {record.status}:</strong> {record.error}
          </p>
        </div>
      ) : null}
      {record?.status === 'succeeded' ? <JsonBlock title="Result" value={record.result} /> : null}
      {record && record.error_details !== null ? (
        <JsonBlock title="Error details" value={record.error_details} />
      ) : null}
    </>
  );
}

interface CallOutcomeViewProps {
  target: string;
  pending: boolean;
  outcome: CallOutcome | undefined;
  error: unknown;
  /** The refusal's failing fields: those of the input are also shown on the form. */
  fieldErrors: FieldError[];
}

/**
 * What the last call came to: the result (sync), the queued execution followed live (async), or
 * the problem, with the execution a failed call was recorded on.
 */
export function CallOutcomeView({ target, pending, outcome, error, fieldErrors }: CallOutcomeViewProps) {
  const failed = failedExecutionOf(error);
  return (
    <section aria-labelledby="outcome-title" aria-live="polite" className="outcome">
      <h2 id="outcome-title">Outcome</h2>
      {pending ? (
        <p className="muted">
          Calling <code>{target}</code>…
        </p>
      ) : null}
      {!pending && !outcome && !error ? (
        <p className="muted">Run the function to see its result here.</p>
      ) : null}
      {error ? (
        <>
          <ProblemMessage
            error={error}
            context={failed ? `The execution of ${target} failed` : `The call to ${target} was refused`}
          />
          {fieldErrors.length > 0 ? (
            <ul className="issues" aria-label="Fields the server refused">
              {fieldErrors.map((item) => (
                <li key={`${item.field} ${item.message}`}>
                  <code>{item.field}</code>: {item.message}
                </li>
              ))}
            </ul>
          ) : null}
          {failed ? (
            <>
              <p>
                Recorded as execution <ExecutionLink executionId={failed.executionId} />
                {failed.status ? (
                  <>
                    {' '}
                    <StatusBadge status={failed.status} />
                  </>
                ) : null}
                {ms(failed.durationMs)}
                {failed.errorMessage ? (
                  <>
                    : <span className="mono">{failed.errorMessage}</span>
                  </>
                ) : null}
              </p>
              {failed.errorDetails !== null ? (
                <JsonBlock title="Error details" value={failed.errorDetails} />
              ) : null}
            </>
          ) : null}
        </>
      ) : null}
      {outcome?.lane === 'sync' ? (
        <>
          <p>
            Execution <ExecutionLink executionId={outcome.result.execution_id} />{' '}
            <StatusBadge status={outcome.result.status} />
            {ms(outcome.result.duration_ms)}
          </p>
          <JsonBlock title="Result" value={outcome.result.result} />
        </>
      ) : null}
      {outcome?.lane === 'async' ? <QueuedExecution executionId={outcome.accepted.execution_id} /> : null}
    </section>
  );
}
