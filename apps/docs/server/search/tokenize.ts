/**
 * Tokenization shared by the index and the queries. Lower-case, split on anything that is not a
 * letter or digit, but keep identifiers searchable as written: `X-API-Key`, `snake_case`,
 * `agent.skill` and `createRunShare` each yield the whole identifier as one token as well as
 * their parts, so an exact identifier outranks prose that merely mentions its words.
 */
import { stemmer } from 'stemmer';
import { isStopword } from '../../contract/stopwords.ts';

/** A run of letters/digits, optionally joined by `-`, `_` or `.` into one identifier. */
const WORD = /[\p{L}\p{N}]+(?:[-_.][\p{L}\p{N}]+)*/gu;

/** What joins the parts of an identifier. */
export const JOINER = /[-_.]/;
const CAMEL_PART = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+/gu;
const CAMEL_CASE = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u;

/**
 * The stem of a word (Porter's algorithm, the `stemmer` package): `configure`, `configuration`
 * and `configuring` meet, as do `routes` and `route`. Short words and words with digits (`v2`,
 * `s3`, `429`) are left as written.
 */
export function stem(term: string): string {
  if (term.length <= 3 || /\d/.test(term)) return term;
  return stemmer(term);
}

/** Receives each term of a text with the lower-cased word it came from. */
export type TermSink = (term: string, word: string) => void;

function emitWord(word: string, emit: TermSink): void {
  const parts = word.split(JOINER);
  if (parts.length > 1) emit(word.toLowerCase(), word.toLowerCase());
  for (const part of parts) {
    const lower = part.toLowerCase();
    const pieces = CAMEL_CASE.test(part) ? part.match(CAMEL_PART) : null;
    if (pieces && pieces.length > 1) {
      emit(lower, lower);
      for (const piece of pieces) {
        const p = piece.toLowerCase();
        if (!isStopword(p)) emit(stem(p), p);
      }
      continue;
    }
    if (!isStopword(lower)) emit(stem(lower), lower);
  }
}

/** Hands every term of a text to `emit`, in order, duplicates kept, with the word it came from. */
export function eachTerm(text: string, emit: TermSink): void {
  for (const match of text.matchAll(WORD)) emitWord(match[0], emit);
}

/** The terms of a text, in order, duplicates kept (the index counts them). */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  eachTerm(text, (term) => {
    terms.push(term);
  });
  return terms;
}
