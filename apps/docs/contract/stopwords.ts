/**
 * The common English words that carry no search meaning ("how do I ..."): the site API's ranking
 * drops them, and so does the search box before it hands a question to Pagefind on a statically
 * hosted site, so a question written in words finds the same pages either way.
 */
const STOPWORDS = new Set(
  (
    'a an and are as at be but by can do does for from has have how i if in into is it its ' +
    'my of on or so than that the their then there these this to was we what when where which ' +
    'while who why will with you your'
  ).split(' '),
);

/** True for a lower-cased word that carries no search meaning. */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}
