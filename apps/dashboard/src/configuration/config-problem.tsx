import { ApiProblem } from '@switchyard/client';
import { ProblemMessage } from '../components/problem-message.tsx';

interface Issue {
  field?: string;
  key?: string;
  source?: string;
  message: string;
}

/** The `errors` of a problem document, where the server listed them. */
function issuesOf(error: unknown): Issue[] {
  if (!(error instanceof ApiProblem)) return [];
  const errors = (error.problem as { errors?: unknown } | undefined)?.errors;
  return Array.isArray(errors)
    ? errors.filter((item): item is Issue => typeof item === 'object' && item !== null && 'message' in item)
    : [];
}

/**
 * A refused save: the server's title and detail, then each setting it refused with its message
 * and where the value came from, one line each, so every one can be fixed in the editor.
 */
export function ConfigProblem({ error, context }: { error: unknown; context: string }) {
  const issues = issuesOf(error);
  if (issues.length === 0) return <ProblemMessage error={error} context={context} />;
  const problem = error as ApiProblem;
  return (
    <div className="problem" role="alert">
      <p>
        <strong>{context}:</strong> {problem.title} ({problem.status})
      </p>
      <ul className="issues" aria-label="What the server refused">
        {issues.map((issue, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: issues have no id, and one key can be refused twice.
          <li key={index}>
            <code>{issue.key ?? issue.field ?? '(body)'}</code>: {issue.message}
            {issue.source ? <span className="muted"> ({issue.source})</span> : null}
          </li>
        ))}
      </ul>
      {problem.resolution ? <p>{problem.resolution}</p> : null}
    </div>
  );
}
