import { tokenizeWithOffsets } from './tokenize.ts';

const SNIPPET_LENGTH = 240;
/** How much text to keep before the first match so it reads as a sentence, not a fragment. */
const LEAD = 60;

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Plain text around the best match of a passage: the window of about 240 characters that holds
 * the most distinct query terms, cut at word boundaries, with an ellipsis where text was cut.
 * No highlighting markup, so clients can show or embed it as is.
 */
export function buildSnippet(text: string, queryTerms: readonly string[], fallback = ''): string {
  const source = text.trim() === '' ? fallback : text;
  if (source.length <= SNIPPET_LENGTH) return collapse(source);
  const wanted = new Set(queryTerms);
  const words = tokenizeWithOffsets(source);
  const matches = words.filter((word) => word.terms.some((term) => wanted.has(term)));

  let start = 0;
  if (matches.length > 0) {
    let bestCount = -1;
    for (const anchor of matches) {
      const windowEnd = anchor.start + SNIPPET_LENGTH - LEAD;
      const seen = new Set<string>();
      for (const word of matches) {
        if (word.start < anchor.start || word.end > windowEnd) continue;
        for (const term of word.terms) if (wanted.has(term)) seen.add(term);
      }
      if (seen.size > bestCount) {
        bestCount = seen.size;
        start = Math.max(0, anchor.start - LEAD);
      }
    }
  }
  let end = Math.min(source.length, start + SNIPPET_LENGTH);
  if (end === source.length) start = Math.max(0, end - SNIPPET_LENGTH);
  if (start > 0) {
    const space = source.indexOf(' ', start);
    if (space !== -1 && space < start + 20) start = space + 1;
  }
  if (end < source.length) {
    const space = source.lastIndexOf(' ', end);
    if (space > end - 20) end = space;
  }
  return `${start > 0 ? '…' : ''}${collapse(source.slice(start, end))}${end < source.length ? '…' : ''}`;
}
