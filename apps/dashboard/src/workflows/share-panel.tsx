import { unwrap } from '@switchyard/client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId } from 'react';
import { ProblemMessage } from '../components/problem-message.tsx';
import { useConnection } from '../connection/connection.tsx';

/**
 * Publishes the workflow as a run share on the docs site. The control plane builds the bundle and
 * posts it (this page may only talk to its own origin), so the dashboard asks it to; inputs,
 * outputs and errors are redacted unless the person publishing includes them on purpose.
 */
export function SharePanel({ workflowId }: { workflowId: string }) {
  const { client } = useConnection();
  const titleId = useId();
  const share = useMutation({
    mutationFn: (body: { title?: string; redact: boolean }) =>
      unwrap(
        client.POST('/api/ui/v1/workflows/{workflow_id}/share', {
          params: { path: { workflow_id: workflowId } },
          body,
        }),
      ),
  });

  function publish(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const title = String(form.get('title') ?? '').trim();
    share.mutate({ ...(title ? { title } : {}), redact: form.get('include') !== 'on' });
  }

  return (
    <details className="share-panel">
      <summary>Share this run</summary>
      <form onSubmit={publish} aria-label="Share this run">
        <p className="muted">
          Publishes the graph, statuses and times to the docs site as a permalink anyone with the link can
          open.
        </p>
        <label htmlFor={titleId}>Title (optional)</label>
        <input id={titleId} name="title" maxLength={200} placeholder={workflowId} />
        <label className="check">
          <input type="checkbox" name="include" /> Include inputs, outputs and errors (redacted otherwise)
        </label>
        <div className="actions">
          <button type="submit" className="primary" disabled={share.isPending}>
            {share.isPending ? 'Publishing…' : 'Publish'}
          </button>
        </div>
      </form>
      {share.error ? <ProblemMessage error={share.error} context="Could not publish the run" /> : null}
      {share.data ? (
        <p className="share-link" role="status">
          Published: <a href={share.data.url}>{share.data.url}</a>
        </p>
      ) : null}
    </details>
  );
}
