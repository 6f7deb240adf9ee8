import { type MemoryChangePayload, streamEvents } from '@switchyard/client';
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { isUnauthorized, useConnection } from '../connection/connection.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { MEMORY_KEY, type ScopeChoice, scopeFields } from './memory-queries.ts';

/** Changes kept on screen, newest first. */
const SHOWN = 50;

interface Change extends MemoryChangePayload {
  id: string;
}

/**
 * Follows the memory change stream for the chosen scope and a key pattern (`*` any run of
 * characters). Each change shows on top and refreshes the key list and value on the page.
 */
export function MemoryWatch({ choice }: { choice: ScopeChoice }) {
  const { baseUrl, apiKey, requireKey } = useConnection();
  const queryClient = useQueryClient();
  const [pattern, setPattern] = useState('');
  const [applied, setApplied] = useState('');
  const [changes, setChanges] = useState<Change[]>([]);
  const [state, setState] = useState<string>('connecting');
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const controller = new AbortController();
    setChanges([]);
    setError(null);
    const fields = scopeFields(choice);
    const handle = streamEvents({
      baseUrl,
      apiKey,
      path: '/api/v1/memory/events/sse',
      query: { ...fields, ...(applied ? { key: applied } : {}) },
      signal: controller.signal,
      onEvent: ({ id, data }) => {
        setChanges((was) => [{ ...data, id: id ?? `${data.timestamp} ${data.key}` }, ...was].slice(0, SHOWN));
        refreshOnEvent(queryClient, MEMORY_KEY);
      },
      onState: (next) => {
        setState(next);
        if (next === 'live') setError(null);
      },
      onError: (problem, { retrying }) => {
        if (isUnauthorized(problem)) requireKey();
        if (!retrying) setError(problem);
      },
    });
    handle.done.catch((reason: unknown) => setError(reason));
    return () => controller.abort();
  }, [baseUrl, apiKey, requireKey, queryClient, choice, applied]);

  function apply(event: FormEvent) {
    event.preventDefault();
    setApplied(pattern.trim());
  }

  return (
    <section aria-labelledby="watch-title">
      <div className="page-head">
        <h2 id="watch-title">Changes</h2>
        <output
          className="live watch-state"
          data-watch={state === 'live' ? 'live' : 'reconnecting'}
          aria-live="polite"
        >
          {state === 'live' ? 'Watching' : state === 'closed' ? 'Stopped' : 'Connecting…'}
        </output>
      </div>
      <form className="filters" onSubmit={apply} aria-label="Watch keys">
        <label>
          Key pattern
          <input
            value={pattern}
            onChange={(event) => setPattern(event.target.value)}
            placeholder="every key, or draft*, user.*.prefs"
          />
        </label>
        <div className="actions">
          <button type="submit">Watch</button>
        </div>
      </form>
      {error ? <ProblemMessage error={error} context="The change stream stopped" /> : null}
      {changes.length === 0 ? (
        <p className="muted">
          No change yet{applied ? ` to keys matching ${applied}` : ''}. Sets and deletes in this scope appear
          here as they happen, from this page or any agent.
        </p>
      ) : (
        <ul className="logs card" aria-label="Memory changes">
          {changes.map((change) => (
            <li key={change.id}>
              <RelativeTime iso={change.timestamp} />{' '}
              <span className={`badge ${change.action === 'set' ? 'ok' : 'bad'}`}>{change.action}</span>{' '}
              <code>{change.key}</code>{' '}
              <span className="muted mono">{JSON.stringify(change.data)?.slice(0, 120)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
