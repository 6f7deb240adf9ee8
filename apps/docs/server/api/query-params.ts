import { ProblemError } from '@switchyard/shared';

/**
 * One query parameter's value, or undefined when absent. A parameter given twice is refused:
 * silently picking one of `?q=a&q=b` would answer a question the client did not ask.
 */
export function singleParam(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) {
    throw new ProblemError(
      'invalid_request',
      `The query parameter "${name}" was given ${values.length} times; send it once.`,
    );
  }
  return values[0];
}
