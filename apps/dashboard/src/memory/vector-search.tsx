import { unwrap } from '@switchyard/client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { useConnection } from '../connection/connection.tsx';
import { type ScopeChoice, scopeFields } from './memory-queries.ts';

/** The pasted text as an embedding, or why it is not one. */
function parseEmbedding(text: string): number[] | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'The embedding is not JSON: paste an array of numbers such as [0.1, 0.2, 0.3].';
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((x) => typeof x === 'number')) {
    return 'The embedding must be a JSON array of numbers such as [0.1, 0.2, 0.3].';
  }
  return value;
}

/** Nearest stored vectors of the chosen scope to a pasted embedding, by cosine similarity. */
export function VectorSearch({ choice }: { choice: ScopeChoice }) {
  const { client } = useConnection();
  const [text, setText] = useState('');
  const [topK, setTopK] = useState('10');
  const [threshold, setThreshold] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const search = useMutation({
    mutationFn: (embedding: number[]) =>
      unwrap(
        client.POST('/api/v1/memory/vector/search', {
          body: {
            ...scopeFields(choice),
            query_embedding: embedding,
            top_k: Number(topK),
            ...(threshold.trim() ? { threshold: Number(threshold) } : {}),
          },
        }),
      ),
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const embedding = parseEmbedding(text);
    if (typeof embedding === 'string') {
      setInvalid(embedding);
      return;
    }
    setInvalid(null);
    search.mutate(embedding);
  }

  // Either answer shape the server may be set to give: `{ results }` or the bare array.
  const hits = search.data ? (Array.isArray(search.data) ? search.data : search.data.results) : [];
  return (
    <section aria-labelledby="vector-title">
      <h2 id="vector-title">Vector search</h2>
      <form className="stack" onSubmit={submit} aria-label="Vector search">
        <label htmlFor="vector-embedding">Query embedding (JSON array of numbers)</label>
        <textarea
          id="vector-embedding"
          className="code-input"
          rows={3}
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder="[0.12, -0.4, 0.33]"
          aria-invalid={invalid ? true : undefined}
          aria-describedby={invalid ? 'vector-invalid' : undefined}
        />
        {invalid ? (
          <p id="vector-invalid" className="field-error">
            {invalid}
          </p>
        ) : null}
        <div className="filters">
          <label>
            Results (top k)
            <input type="number" min={1} max={100} value={topK} onChange={(e) => setTopK(e.target.value)} />
          </label>
          <label>
            Lowest score (−1 to 1)
            <input
              type="number"
              min={-1}
              max={1}
              step="any"
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
            />
          </label>
          <div className="actions">
            <button type="submit" className="primary" disabled={search.isPending}>
              {search.isPending ? 'Searching…' : 'Search'}
            </button>
          </div>
        </div>
      </form>
      {search.error ? <ProblemMessage error={search.error} context="The search was refused" /> : null}
      {search.isSuccess && hits.length === 0 ? (
        <p className="muted">
          No stored vector of this dimension in this scope is similar enough. Agents store vectors with POST
          /api/v1/memory/vector.
        </p>
      ) : null}
      {hits.length > 0 ? (
        <ol className="hits" aria-label="Search results">
          {hits.map((hit) => (
            <li key={hit.key} className="card">
              <p>
                <code>{hit.key}</code> <span className="badge info">score {hit.score.toFixed(4)}</span>
              </p>
              <JsonBlock title={`Metadata of ${hit.key}`} value={hit.metadata} />
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
