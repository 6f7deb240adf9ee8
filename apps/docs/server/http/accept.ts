import Negotiator from 'negotiator';

/**
 * Proactive content negotiation (RFC 9110 §12.5.1) with `negotiator`, over a short list of media
 * types the server can produce for one URL.
 */

/**
 * Whether an Accept header names at least one media range (`type/subtype`). A header with none
 * (`;;;`, `nonsense`) says nothing a server can honour, and RFC 9110 §12.5.1 lets the server
 * disregard it; negotiator would read it as "nothing is acceptable".
 */
const MEDIA_RANGE = /(?:^|,)\s*[^\s,;/"]+\/[^\s,;/"]+\s*(?:;|,|$)/;

/**
 * Every representation this server negotiates is UTF-8 text, and negotiator only matches an Accept
 * member that carries parameters (`text/markdown; charset=utf-8`) against an offer with the same
 * parameters, so each offer is made with the charset it is really sent in.
 */
const withCharset = (offer: string) => `${offer}; charset=utf-8`;

/**
 * Picks the representation to send. `offers` are in server preference order (the first wins
 * ties). Returns undefined when the client accepts none of them. An absent or blank header, or
 * one that names no media range, accepts anything.
 *
 * negotiator gives each offer the q of the most specific matching range (so `text/*;q=0,
 * text/html` still accepts HTML), then orders the offers by q, then by how specific the match
 * was (`text/markdown, *\/*` means markdown), then by the order the client listed them, then by
 * the server's order.
 */
export function negotiate<T extends string>(header: string | undefined, offers: readonly T[]): T | undefined {
  if (header === undefined) return offers[0];
  let chosen = memoOf(offers);
  const known = chosen.get(header);
  if (known !== undefined || chosen.has(header)) return known as T | undefined;
  let result: T | undefined;
  if (!MEDIA_RANGE.test(header)) {
    result = offers[0];
  } else {
    const made = offers.map(withCharset);
    const preferred = new Negotiator({ headers: { accept: header } }).mediaType(made);
    result = preferred === undefined ? undefined : offers[made.indexOf(preferred)];
  }
  if (chosen.size >= MEMO_LIMIT) {
    chosen = new Map();
    memos.set(offers.join(','), chosen);
  }
  chosen.set(header, result);
  return result;
}

/**
 * Accept values repeat (a browser sends the same one for every page), so the choice is remembered
 * per offer list and header: negotiator's parse was several per cent of a page request in the
 * static-page profile (bench/docs-api/README.md). Each memo starts over when it fills, so
 * arbitrary headers cannot grow it.
 */
const memos = new Map<string, Map<string, string | undefined>>();
const memoByList = new WeakMap<readonly string[], string>();
const MEMO_LIMIT = 256;

/** The memo of one offer list; offer lists are constants of the code, so there are few. */
function memoOf(offers: readonly string[]): Map<string, string | undefined> {
  let key = memoByList.get(offers);
  if (key === undefined) {
    key = offers.join(',');
    memoByList.set(offers, key);
  }
  let memo = memos.get(key);
  if (!memo) {
    memo = new Map();
    memos.set(key, memo);
  }
  return memo;
}
