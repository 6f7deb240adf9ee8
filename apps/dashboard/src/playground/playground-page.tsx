import './playground.css';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useMemo } from 'react';
import { EmptyState, TutorialLink } from '../components/empty-state.tsx';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { type CallOutcome, callFunction, type Lane } from './call-function.ts';
import { CallOutcomeView } from './call-outcome.tsx';
import { CATALOG_KEY, type CallableFunction, catalogQuery } from './function-catalog.ts';
import { InputEditor } from './input-editor.tsx';
import { inputErrorSchema, problemFieldErrors } from './server-field-errors.ts';

/** The functions by agent, for the picker's groups. */
function byAgent(functions: CallableFunction[]): Map<string, CallableFunction[]> {
  const groups = new Map<string, CallableFunction[]>();
  for (const fn of functions) groups.set(fn.agentId, [...(groups.get(fn.agentId) ?? []), fn]);
  return groups;
}

function FunctionPicker({
  functions,
  target,
  onPick,
}: {
  functions: CallableFunction[];
  target: string;
  onPick(target: string): void;
}) {
  const listed = functions.some((fn) => fn.target === target);
  return (
    <div className="stack">
      <label htmlFor="playground-target">Function</label>
      <select id="playground-target" value={target} onChange={(event) => onPick(event.target.value)}>
        <option value="">Choose a function…</option>
        {target && !listed ? <option value={target}>{target} (not listed by discovery)</option> : null}
        {[...byAgent(functions)].map(([agent, fns]) => (
          <optgroup key={agent} label={`${agent} (${fns[0]?.health})`}>
            {fns.map((fn) => (
              <option key={fn.target} value={fn.target}>
                {fn.target} ({fn.kind})
              </option>
            ))}
          </optgroup>
        ))}
      </select>
    </div>
  );
}

function FunctionFacts({ fn }: { fn: CallableFunction }) {
  return (
    <div className="card function-facts">
      <p>
        <code>{fn.target}</code>, a {fn.kind} of{' '}
        <Link to="/nodes/$nodeId" params={{ nodeId: fn.agentId }} className="mono">
          {fn.agentId}
        </Link>{' '}
        <span className="muted">version {fn.version}</span> <StatusBadge status={fn.health} />
      </p>
      {fn.description ? <p>{fn.description}</p> : null}
      {fn.tags.length > 0 ? <p className="muted">Tags: {fn.tags.join(', ')}</p> : null}
      {fn.inputSchema ? (
        <details>
          <summary>Input schema</summary>
          <JsonBlock title={`Input schema of ${fn.target}`} value={fn.inputSchema} />
        </details>
      ) : null}
    </div>
  );
}

/**
 * Call any registered function: pick it (from discovery), fill in its input as a form generated
 * from its input_schema or as JSON, call it and wait for the result or queue it, and see the
 * result or the problem with a link to the execution. `?target=&input=` pre-fill it ("Run again").
 */
export function PlaygroundPage() {
  const search = useSearch({ from: '/playground' });
  const navigate = useNavigate({ from: '/playground' });
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const catalog = useQuery(catalogQuery(client));
  useLiveEvents((event) => {
    if (event.stream === 'nodes') refreshOnEvent(queryClient, CATALOG_KEY);
  });

  const target = search.target ?? '';
  const functions = catalog.data ?? [];
  const fn = functions.find((item) => item.target === target);
  const call = useMutation({
    mutationFn: ({ lane, input }: { lane: Lane; input: Record<string, unknown> }) =>
      callFunction(client, lane, target, input),
  });
  const fieldErrors = useMemo(() => problemFieldErrors(call.error), [call.error]);
  const serverErrors = useMemo(() => inputErrorSchema(fieldErrors), [fieldErrors]);
  const settled = !catalog.isPending;

  function pick(next: string) {
    call.reset();
    void navigate({ search: next ? { target: next } : {}, replace: true });
  }

  return (
    <>
      <h1>Playground</h1>
      {catalog.error ? (
        <ProblemMessage error={catalog.error} context="Could not read the functions from discovery" />
      ) : null}
      {catalog.isPending ? <p className="muted">Loading the functions…</p> : null}
      {catalog.data && functions.length === 0 && !target ? (
        <EmptyState title="No agent has registered a function yet">
          <p>Functions appear here to call as soon as an agent registers.</p>
          <p>
            <TutorialLink />
          </p>
        </EmptyState>
      ) : null}
      {settled && (functions.length > 0 || target) ? (
        <div className="picker">
          <FunctionPicker functions={functions} target={target} onPick={pick} />
          {fn ? <FunctionFacts fn={fn} /> : null}
          {target && !fn && catalog.data ? (
            <p className="muted">
              Discovery does not list <code>{target}</code> now: its agent may be away. The call can still be
              made with a JSON input; the server says whether it can run.
            </p>
          ) : null}
        </div>
      ) : null}
      {settled && target ? (
        <>
          <InputEditor
            key={target}
            schema={fn?.inputSchema}
            initial={search.input}
            serverErrors={serverErrors}
            pending={call.isPending}
            onRun={(input, lane) => call.mutate({ lane, input })}
          />
          <CallOutcomeView
            target={target}
            pending={call.isPending}
            outcome={call.data as CallOutcome | undefined}
            error={call.error}
            fieldErrors={fieldErrors}
          />
        </>
      ) : null}
    </>
  );
}
