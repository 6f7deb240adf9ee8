import { unwrap } from '@switchyard/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { EmptyState } from '../components/empty-state.tsx';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { useConnection } from '../connection/connection.tsx';
import {
  MEMORY_KEY,
  MEMORY_PAGE_SIZE,
  memoryListQuery,
  type ScopeChoice,
  scopeFields,
  scopeReady,
} from './memory-queries.ts';
import { MemoryWatch } from './memory-watch.tsx';
import { ScopeForm } from './scope-form.tsx';
import { VectorSearch } from './vector-search.tsx';

type Entry = NonNullable<ReturnType<typeof useKeyList>['list']['data']>[number];

function useKeyList(choice: ScopeChoice) {
  const { client } = useConnection();
  // Pages are walked by their last key, as the server's Link header does.
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  const after = pages[pages.length - 1];
  const list = useQuery(memoryListQuery(client, choice, after));
  return { list, pages, setPages, after };
}

/** Sets a key of the scope to a JSON value (POST /api/v1/memory/set). */
function SetForm({
  choice,
  initialKey,
  initialValue,
}: {
  choice: ScopeChoice;
  initialKey: string;
  initialValue: string;
}) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const [key, setKey] = useState(initialKey);
  const [value, setValue] = useState(initialValue);
  const [invalid, setInvalid] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (body: { key: string; data: unknown }) =>
      unwrap(client.POST('/api/v1/memory/set', { body: { ...scopeFields(choice), ...body } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: MEMORY_KEY }),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    let data: unknown;
    try {
      data = JSON.parse(value);
    } catch (error) {
      setInvalid(`The value is not JSON (${(error as Error).message}). Strings need quotes: "text".`);
      return;
    }
    setInvalid(null);
    save.mutate({ key, data });
  }
  return (
    <form className="stack card" onSubmit={submit} aria-label="Set a key">
      <h2>Set a key</h2>
      <label htmlFor="memory-key">Key</label>
      <input id="memory-key" required maxLength={255} value={key} onChange={(e) => setKey(e.target.value)} />
      <label htmlFor="memory-value">Value (JSON)</label>
      <textarea
        id="memory-value"
        className="code-input"
        rows={5}
        required
        value={value}
        onChange={(e) => setValue(e.target.value)}
        placeholder='{"theme": "dark"}'
        aria-invalid={invalid ? true : undefined}
        aria-describedby={invalid ? 'memory-value-invalid' : undefined}
      />
      {invalid ? (
        <p id="memory-value-invalid" className="field-error">
          {invalid}
        </p>
      ) : null}
      {save.error ? <ProblemMessage error={save.error} context="The value was not saved" /> : null}
      {save.isSuccess ? (
        <p className="muted" role="status">
          Saved <code>{save.data.key}</code> in {save.data.scope} {save.data.scope_id}.
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}

/** The selected entry: its value and a delete that asks first. */
function EntryView({ choice, entry, onDeleted }: { choice: ScopeChoice; entry: Entry; onDeleted(): void }) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () =>
      unwrap(client.POST('/api/v1/memory/delete', { body: { ...scopeFields(choice), key: entry.key } })),
    onSuccess: () => {
      setConfirming(false);
      onDeleted();
      return queryClient.invalidateQueries({ queryKey: MEMORY_KEY });
    },
  });
  return (
    <section className="card ops-card" aria-labelledby="entry-title">
      <div className="page-head">
        <h2 id="entry-title" className="mono">
          {entry.key}
        </h2>
        {confirming ? (
          <div className="actions">
            <span>Delete this key?</span>
            <button
              type="button"
              className="danger"
              onClick={() => remove.mutate()}
              disabled={remove.isPending}
            >
              {remove.isPending ? 'Deleting…' : 'Yes, delete'}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </div>
        ) : (
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Delete…
          </button>
        )}
      </div>
      <p className="muted">
        Written <RelativeTime iso={entry.updated_at} />, first <RelativeTime iso={entry.created_at} />.
      </p>
      {remove.error ? <ProblemMessage error={remove.error} context="The key was not deleted" /> : null}
      <JsonBlock title="Value" value={entry.data} />
    </section>
  );
}

/**
 * Key-value memory by scope: the keys of one scope, a value in the JSON viewer, set and delete,
 * the scope's changes as they happen, and vector search with a pasted embedding.
 */
export function MemoryPage() {
  const [choice, setChoice] = useState<ScopeChoice>({ scope: 'global', scopeId: '' });
  const [selected, setSelected] = useState<string | null>(null);
  const { list, pages, setPages } = useKeyList(choice);
  const entries = list.data ?? [];
  const entry = entries.find((item) => item.key === selected);
  const scopeName = choice.scope === 'global' ? 'the global scope' : `${choice.scope} ${choice.scopeId}`;

  function applyScope(next: ScopeChoice) {
    setChoice(next);
    setSelected(null);
    setPages([undefined]);
  }

  return (
    <>
      <div className="page-head">
        <h1>Memory</h1>
        {list.data ? (
          <span className="muted">
            {entries.length}
            {entries.length === MEMORY_PAGE_SIZE ? '+' : ''} keys in {scopeName}
          </span>
        ) : null}
      </div>
      <ScopeForm value={choice} onApply={applyScope} />
      {!scopeReady(choice) ? <p className="muted">Enter the scope's id to see its keys.</p> : null}
      {list.error ? <ProblemMessage error={list.error} context="Could not list the keys" /> : null}
      {list.isLoading ? <p className="muted">Loading keys…</p> : null}
      <div className="split">
        <section aria-labelledby="keys-title">
          <h2 id="keys-title">Keys</h2>
          {list.data && entries.length === 0 ? (
            <EmptyState title={`No key in ${scopeName}`}>
              <p>
                Set one with the form below, or let an agent write memory (its SDK's memory.set). Pick another
                scope above to browse it.
              </p>
            </EmptyState>
          ) : null}
          {entries.length > 0 ? (
            <ul className="key-list" aria-label={`Keys in ${scopeName}`}>
              {entries.map((item) => (
                <li key={item.key}>
                  <button
                    type="button"
                    className="key-button"
                    aria-pressed={item.key === selected}
                    onClick={() => setSelected(item.key)}
                  >
                    <code>{item.key}</code>
                    <span className="muted">
                      <RelativeTime iso={item.updated_at} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
          <div className="actions">
            {pages.length > 1 ? (
              <button type="button" onClick={() => setPages((was) => was.slice(0, -1))}>
                Previous keys
              </button>
            ) : null}
            {entries.length === MEMORY_PAGE_SIZE ? (
              <button
                type="button"
                onClick={() => setPages((was) => [...was, entries[entries.length - 1]?.key])}
              >
                Next keys
              </button>
            ) : null}
          </div>
        </section>
        <div>
          {entry ? (
            <EntryView choice={choice} entry={entry} onDeleted={() => setSelected(null)} />
          ) : (
            <p className="muted">Choose a key to see its value.</p>
          )}
        </div>
      </div>
      <SetForm
        key={`${choice.scope} ${choice.scopeId} ${entry?.key ?? ''}`}
        choice={choice}
        initialKey={entry?.key ?? ''}
        initialValue={entry ? JSON.stringify(entry.data, null, 2) : ''}
      />
      {scopeReady(choice) ? <MemoryWatch choice={choice} /> : null}
      {scopeReady(choice) ? <VectorSearch choice={choice} /> : null}
    </>
  );
}
