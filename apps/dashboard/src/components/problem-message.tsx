import { ApiProblem, problemMessage } from '@switchyard/client';

/**
 * A failed call as a person reads it: the problem document's title, detail and what to do next,
 * never its raw JSON. Anything that is not an API problem shows its message.
 */
export function ProblemMessage({ error, context }: { error: unknown; context?: string }) {
  const heading = context ?? 'The request failed';
  if (error instanceof ApiProblem) {
    return (
      <div className="problem" role="alert">
        <p>
          <strong>{heading}:</strong> {error.title}
          {error.status ? ` (${error.status})` : ''}
        </p>
        <p>{error.detail}</p>
        {error.resolution ? <p>{error.resolution}</p> : null}
      </div>
    );
  }
  return (
    <div className="problem" role="alert">
      <p>
        <strong>{heading}:</strong> {problemMessage(error)}
      </p>
    </div>
  );
}
