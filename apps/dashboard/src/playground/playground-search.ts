/**
 * The playground's address: `?target=<node>.<function>&input=<JSON object>`, both optional, so a
 * call can be linked to and "Run again" can open it pre-filled. The router parses each search
 * value as JSON when it can: `input` arrives as an object, and a target that looks like a number
 * arrives as one. An input that is not an object is kept as text for the JSON editor to show.
 */
export interface PlaygroundSearch {
  target?: string;
  input?: Record<string, unknown> | string;
}

export function validatePlaygroundSearch(search: Record<string, unknown>): PlaygroundSearch {
  const result: PlaygroundSearch = {};
  const { target, input } = search;
  if (typeof target === 'string' || typeof target === 'number') {
    const text = String(target).trim();
    if (text) result.target = text;
  }
  if (input !== undefined && input !== null && input !== '') {
    if (typeof input === 'object' && !Array.isArray(input)) result.input = input as Record<string, unknown>;
    else result.input = typeof input === 'string' ? input : JSON.stringify(input);
  }
  return result;
}
