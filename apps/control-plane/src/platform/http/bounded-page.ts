/**
 * The byte bound of paged answers. `limit` bounds the entries of a page, not its bytes: an entry
 * can be megabytes (a node's functions with their schemas, a stored value), so a page of `limit`
 * of them could be a gigabyte built in one go, starving every other request. A page therefore
 * ends before the entry that would cross the bound, and the answer says where the next page
 * starts. A page always holds at least one entry, so paging makes progress even past an entry
 * larger than the bound on its own.
 */

/** Room kept for what surrounds the entries of an answer (totals, cursors, an XML declaration). */
export const ENVELOPE_BYTES = 4 * 1024;

/**
 * Renders `entries` in order, each to a piece (or several, `bytesOf` sums them), until the next
 * would pass `budget` bytes; at least one is always taken. Entries past the bound are never
 * rendered. Returns how many entries fit and their pieces.
 */
export function fitWithin<E, P>(
  entries: Iterable<E>,
  render: (entry: E) => P,
  bytesOf: (piece: P) => number,
  budget: number,
): { shown: number; pieces: P[] } {
  const pieces: P[] = [];
  let used = 0;
  for (const entry of entries) {
    const piece = render(entry);
    const size = bytesOf(piece);
    if (pieces.length > 0 && used + size > budget) break;
    pieces.push(piece);
    used += size;
  }
  return { shown: pieces.length, pieces };
}

/**
 * `fitWithin` for JSON answers: each entry rendered with JSON.stringify, counted with the comma
 * that separates it. Join the pieces with `,` inside the array's brackets.
 */
export function fitJsonEntries<E>(
  entries: Iterable<E>,
  view: (entry: E) => unknown,
  budget: number,
): { shown: number; pieces: string[] } {
  return fitWithin(
    entries,
    (entry) => JSON.stringify(view(entry)),
    (piece) => Buffer.byteLength(piece) + 1,
    budget,
  );
}
