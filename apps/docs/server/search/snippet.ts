const SNIPPET_LENGTH = 240;
/** How much text to keep before the first match so it reads as a sentence, not a fragment. */
const LEAD = 60;

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Where each needle starts a word in the text (lower-cased), as [offset, needle index] pairs. */
function findMatches(lower: string, needles: readonly string[]): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  needles.forEach((needle, which) => {
    if (needle.length < 2) return;
    for (
      let at = lower.indexOf(needle);
      at !== -1 && found.length < 400;
      at = lower.indexOf(needle, at + 1)
    ) {
      if (at === 0 || !WORD_CHAR.test(lower[at - 1]!)) found.push([at, which]);
    }
  });
  return found.sort((a, b) => a[0] - b[0]);
}

/**
 * Plain text around the best match of a passage: the window of about 240 characters that holds
 * the most distinct query words, cut at word boundaries, with an ellipsis where text was cut. No
 * highlighting markup, so clients can show or embed it as is.
 *
 * Matches are found by substring search for each query word and its stem at a word start
 * (`webhook` finds "Webhooks"), which is exact enough to place a window and keeps the cost linear
 * in the passage length: snippets are built for every result of every query.
 */
export function buildSnippet(text: string, needles: readonly string[], fallback = ''): string {
  const source = text.trim() === '' ? fallback : text;
  if (source.length <= SNIPPET_LENGTH) return collapse(source);
  const matches = findMatches(source.toLowerCase(), needles);

  let start = 0;
  let best = 0;
  for (let i = 0; i < matches.length; i++) {
    const windowEnd = matches[i]![0] + SNIPPET_LENGTH - LEAD;
    const seen = new Set<number>();
    for (let j = i; j < matches.length && matches[j]![0] < windowEnd; j++) seen.add(matches[j]![1]);
    if (seen.size > best) {
      best = seen.size;
      start = Math.max(0, matches[i]![0] - LEAD);
    }
  }
  let end = Math.min(source.length, start + SNIPPET_LENGTH);
  if (end === source.length) start = Math.max(0, end - SNIPPET_LENGTH);
  if (start > 0) {
    const space = source.slice(start, start + 20).search(/\s/);
    if (space !== -1) start += space + 1;
  }
  if (end < source.length) {
    const space = source.lastIndexOf(' ', end);
    if (space > end - 20) end = space;
  }
  return `${start > 0 ? '…' : ''}${collapse(source.slice(start, end))}${end < source.length ? '…' : ''}`;
}
