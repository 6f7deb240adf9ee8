import { SymSpell } from 'mnemonist';
import { isStopword } from '../../contract/stopwords.ts';
import type { IndexedPage, Passage, SearchIndexFile } from '../artifacts/site-artifacts.ts';
import { eachTerm, JOINER, tokenize } from './tokenize.ts';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * How much one occurrence of a term counts in each part of a passage (BM25F-style: weighted term
 * frequencies feed one saturation). A heading or title that names the term is stronger evidence
 * than one mention in running text; the page's title and keywords are added to each of its
 * passages so a query naming the page finds its sections.
 */
const FIELD_WEIGHTS = { pageTitle: 2, section: 3, keywords: 1.5, description: 1, text: 1 } as const;

/**
 * What a query word found another way than as written counts, against 1 for the word itself: a
 * writer's synonym, the completion of a word being typed (`webho`), or the nearest spelling of a
 * word the site does not contain (`hartbeat`, `memroy`: one edit; two for words of 8 letters or
 * more). Below 1, so a page that has the word as typed still ranks first.
 */
const EXPANSION_WEIGHT = { synonym: 0.8, prefix: 0.7, oneEdit: 0.7, twoEdits: 0.5 } as const;
/** Words of the site a query word may stand for, at most (the most frequent win). */
const MAX_EXPANSIONS = 3;
/**
 * A query word the site has in at most this many passages is also read as the words it begins or
 * the spellings near it that the site has ten times as often: a misspelling can be on a page too
 * (a page that explains typos, a typo in a page), and should not hide the word meant.
 */
const RARE_PASSAGES = 2;
/**
 * What such a rare word counts once the site has a word near it ten times as often: it is then
 * most likely a misspelling of that word, and its own few passages (high IDF) must not outrank
 * the pages about the word meant; they stay in the results.
 */
const PROBABLY_MISSPELT = 0.25;
/** Shortest word completed as a prefix, and shortest corrected for a typo. */
const MIN_PREFIX_LENGTH = 3;
const MIN_TYPO_LENGTH = 4;
/**
 * How much more a page whose title names the query counts: its score is multiplied by one plus
 * this times the share of the query (by weight) its title holds. "Memory scopes" is the page for
 * `memory scopes`, even where a reference page repeats both words more often.
 */
const TITLE_BONUS = 0.5;
/** Other matching sections of a page listed with its result. */
const MORE_SECTIONS = 3;

interface Posting {
  idf: number;
  docs: Uint32Array;
  tfs: Float64Array;
}

/** One ranked page: its best passage, and the page's other passages that matched. */
export interface SearchHit {
  doc: number;
  score: number;
  page: IndexedPage;
  passage: Passage;
  /** Other passages of the page that matched, best first, at most three. */
  sections: Passage[];
}

export interface SearchOutcome {
  /** Number of pages that matched at least one term. */
  total: number;
  hits: SearchHit[];
  /** The distinct terms searched for: the query's own, then what its words stood for. */
  terms: string[];
  /** Lower-cased words of the query, their stems and the words they stood for, for placing snippets. */
  needles: string[];
}

export interface Bm25Index {
  readonly pages: readonly IndexedPage[];
  readonly passages: readonly Passage[];
  /** The best `limit` pages for a query, each with its best passage. */
  search(query: string, limit: number): SearchOutcome;
  /** The position of the page with this `/docs/{slug}` path in `pages`, or -1. */
  pageIndexOf(path: string): number;
  /** The passages of one page, in document order. */
  passagesOf(pageIndex: number): readonly Passage[];
}

/** Higher score first; equal scores keep index order (pages in site order). */
function ranksBefore(score: number, doc: number, otherScore: number, otherDoc: number): boolean {
  return score > otherScore || (score === otherScore && doc < otherDoc);
}

/** The site's words, to find what a misspelt or unfinished query word stands for. */
interface Vocabulary {
  /** Every word as written (lower-cased), sorted, for prefix lookups. */
  sorted: string[];
  /** The term each word is indexed under. */
  termOf: Map<string, string>;
  /** Words within two edits (mnemonist's SymSpell: deletions precomputed, lookups cheap). */
  spelling: SymSpell;
}

/** A term to look up, and how much it counts. */
interface WeightedTerm {
  term: string;
  weight: number;
  /** The word of the site it was found as (for snippets), when not the query's own. */
  word?: string;
}

function buildVocabulary(words: Map<string, string>): Vocabulary {
  const sorted = [...words.keys()].sort();
  const spelling = new SymSpell({ maxDistance: 2, verbosity: 2 });
  for (const word of sorted) if (word.length >= MIN_TYPO_LENGTH && LETTERS.test(word)) spelling.add(word);
  return { sorted, termOf: words, spelling };
}

const LETTERS = /^\p{L}+$/u;

/** The first position in a sorted array whose word is not below `word`. */
function lowerBound(sorted: readonly string[], word: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < word) low = mid + 1;
    else high = mid;
  }
  return low;
}

function addTerms(
  counts: Map<string, number>,
  words: Map<string, string>,
  text: string,
  weight: number,
): void {
  eachTerm(text, (term, word) => {
    counts.set(term, (counts.get(term) ?? 0) + weight);
    if (!words.has(word)) words.set(word, term);
  });
}

/**
 * Builds the in-memory index once per index file: postings as typed arrays, the IDF and each
 * passage's length normalisation precomputed, so a query only walks the postings of its terms.
 */
export function buildBm25Index(file: SearchIndexFile): Bm25Index {
  const { pages, passages } = file;
  const n = passages.length;
  const lengths = new Float64Array(n);
  const byTerm = new Map<string, { docs: number[]; tfs: number[] }>();
  const words = new Map<string, string>();

  passages.forEach((passage, doc) => {
    const page = pages[passage.page]!;
    const counts = new Map<string, number>();
    addTerms(counts, words, page.title, FIELD_WEIGHTS.pageTitle);
    addTerms(counts, words, page.keywords.join(' '), FIELD_WEIGHTS.keywords);
    if (passage.anchor === '') addTerms(counts, words, page.description, FIELD_WEIGHTS.description);
    // The passage before the first heading is titled with the page title: count that once.
    if (passage.section !== page.title) addTerms(counts, words, passage.section, FIELD_WEIGHTS.section);
    addTerms(counts, words, passage.text, FIELD_WEIGHTS.text);
    let length = 0;
    for (const [term, tf] of counts) {
      length += tf;
      let postings = byTerm.get(term);
      if (!postings) {
        postings = { docs: [], tfs: [] };
        byTerm.set(term, postings);
      }
      postings.docs.push(doc);
      postings.tfs.push(tf);
    }
    lengths[doc] = length;
  });

  let totalLength = 0;
  for (const length of lengths) totalLength += length;
  const averageLength = n > 0 ? totalLength / n : 1;
  const norms = new Float64Array(n);
  for (let doc = 0; doc < n; doc++) {
    norms[doc] = BM25_K1 * (1 - BM25_B + (BM25_B * lengths[doc]!) / (averageLength || 1));
  }

  const postingsByTerm = new Map<string, Posting>();
  for (const [term, { docs, tfs }] of byTerm) {
    // The "plus one" IDF of Lucene: never negative, so a term in most passages still helps a little.
    const idf = Math.log(1 + (n - docs.length + 0.5) / (docs.length + 0.5));
    postingsByTerm.set(term, { idf, docs: Uint32Array.from(docs), tfs: Float64Array.from(tfs) });
  }

  const vocabulary = buildVocabulary(words);
  const synonyms = synonymGroups(pages);

  /**
   * The terms a query word stands for when the site does not have it as written, or has it
   * rarely: the words it begins (as typed so far) and the nearest spellings, at least
   * `minimumFrequency` passages each, the most frequent first.
   */
  const frequency = (term: string) => postingsByTerm.get(term)?.docs.length ?? 0;

  function expansionsOf(word: string, ownTerm: string, minimumFrequency: number): WeightedTerm[] {
    const found = new Map<string, WeightedTerm>();
    const offer = (candidate: string, weight: number) => {
      const term = vocabulary.termOf.get(candidate)!;
      if (term === ownTerm || frequency(term) < minimumFrequency) return;
      const known = found.get(term);
      if (!known || known.weight < weight) found.set(term, { term, weight, word: candidate });
    };
    if (word.length >= MIN_PREFIX_LENGTH) {
      // An unfinished word completes to words, not to identifiers that start with it
      // (`webho` is `webhook`, not `webhook_error`), unless it is one being typed.
      const inIdentifier = JOINER.test(word);
      for (let i = lowerBound(vocabulary.sorted, word); i < vocabulary.sorted.length; i++) {
        const candidate = vocabulary.sorted[i]!;
        if (!candidate.startsWith(word)) break;
        if (inIdentifier || !JOINER.test(candidate)) offer(candidate, EXPANSION_WEIGHT.prefix);
      }
    }
    if (word.length >= MIN_TYPO_LENGTH && LETTERS.test(word)) {
      const allowed = word.length >= 8 ? 2 : 1;
      const matches = vocabulary.spelling
        .search(word)
        .filter(
          (m) =>
            m.distance > 0 &&
            m.distance <= allowed &&
            frequency(vocabulary.termOf.get(m.term)!) >= minimumFrequency,
        );
      const nearest = Math.min(...matches.map((m) => m.distance));
      for (const match of matches) {
        if (match.distance !== nearest) continue;
        offer(match.term, nearest === 1 ? EXPANSION_WEIGHT.oneEdit : EXPANSION_WEIGHT.twoEdits);
      }
    }
    return [...found.values()]
      .sort(
        (a, b) => b.weight - a.weight || frequency(b.term) - frequency(a.term) || (a.term < b.term ? -1 : 1),
      )
      .slice(0, MAX_EXPANSIONS);
  }

  /** The query's terms as written, what its unknown words stand for, and its synonyms. */
  function analyse(query: string): WeightedTerm[] {
    const chosen = new Map<string, WeightedTerm>();
    const add = (candidate: WeightedTerm) => {
      const known = chosen.get(candidate.term);
      if (!known || known.weight < candidate.weight) chosen.set(candidate.term, candidate);
    };
    const own: string[] = [];
    eachTerm(query, (term, word) => {
      own.push(term);
      const passages = frequency(term);
      const expansions = passages <= RARE_PASSAGES ? expansionsOf(word, term, passages * 10) : [];
      if (passages > 0) add({ term, weight: expansions.length > 0 ? PROBABLY_MISSPELT : 1 });
      for (const expansion of expansions) add(expansion);
    });
    for (const group of synonyms) {
      if (!group.some((phrase) => phrase.terms.every((term) => own.includes(term)))) continue;
      for (const phrase of group) {
        for (const [i, term] of phrase.terms.entries()) {
          if (postingsByTerm.has(term))
            add({ term, weight: EXPANSION_WEIGHT.synonym, word: phrase.words[i] });
        }
      }
    }
    return [...chosen.values()];
  }

  // Scratch space reused by every query: requests run one at a time on the event loop, and
  // reusing it keeps a query from allocating per passage or per page.
  const pageIndexByPath = new Map(pages.map((page, i) => [page.path, i]));
  const passagesByPage = pages.map(() => [] as Passage[]);
  for (const passage of passages) passagesByPage[passage.page]!.push(passage);

  const titleTerms = pages.map((page) => new Set(tokenize(page.title)));
  const scores = new Float64Array(n);
  const touched = new Uint32Array(n);
  const pageScores = new Float64Array(pages.length);
  /** Each page's best passage in the current query, or -1. */
  const bestOfPage = new Int32Array(pages.length).fill(-1);
  const touchedPages = new Uint32Array(pages.length);

  return {
    pages,
    passages,
    pageIndexOf: (path) => pageIndexByPath.get(path) ?? -1,
    passagesOf: (pageIndex) => passagesByPage[pageIndex] ?? [],
    search(query, limit) {
      const weighted = analyse(query);
      let touchedCount = 0;
      for (const { term, weight: expansionWeight } of weighted) {
        const posting = postingsByTerm.get(term);
        if (!posting) continue;
        const { idf, docs, tfs } = posting;
        // A whole identifier from the query (`workflow_id`, `X-API-Key`) stands for all of its
        // parts at once, so it weighs as many query terms as it has parts: otherwise a short
        // passage repeating the parts outranks a long one (a settings table) naming it exactly.
        const weight = expansionWeight * term.split(JOINER).length;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!;
          const tf = tfs[i]!;
          if (scores[doc] === 0) touched[touchedCount++] = doc;
          scores[doc]! += (weight * idf * (tf * (BM25_K1 + 1))) / (tf + norms[doc]!);
        }
      }
      // A page ranks by its best passage, so one long page cannot fill every place.
      let pageCount = 0;
      for (let i = 0; i < touchedCount; i++) {
        const doc = touched[i]!;
        const page = passages[doc]!.page;
        const best = bestOfPage[page]!;
        if (best === -1) touchedPages[pageCount++] = page;
        if (best === -1 || ranksBefore(scores[doc]!, doc, scores[best]!, best)) bestOfPage[page] = doc;
      }
      let queryWeight = 0;
      for (const { weight } of weighted) queryWeight += weight;
      for (let i = 0; i < pageCount; i++) {
        const page = touchedPages[i]!;
        let inTitle = 0;
        for (const { term, weight } of weighted) if (titleTerms[page]!.has(term)) inTitle += weight;
        pageScores[page] = scores[bestOfPage[page]!]! * (1 + (TITLE_BONUS * inTitle) / queryWeight);
      }
      const pageScore = (doc: number) => pageScores[passages[doc]!.page]!;
      // Keep the best `limit` in a small sorted array: limit is at most 20, so insertion beats
      // sorting every matching page.
      const top: number[] = [];
      for (let i = 0; i < pageCount; i++) {
        const doc = bestOfPage[touchedPages[i]!]!;
        const score = pageScore(doc);
        let at = top.length;
        while (at > 0 && ranksBefore(score, doc, pageScore(top[at - 1]!), top[at - 1]!)) at--;
        if (at === limit) continue;
        top.splice(at, 0, doc);
        if (top.length > limit) top.pop();
      }
      const more = new Map(top.map((doc) => [passages[doc]!.page, [] as number[]]));
      for (let i = 0; i < touchedCount; i++) {
        const doc = touched[i]!;
        const others = more.get(passages[doc]!.page);
        if (others && !top.includes(doc)) others.push(doc);
      }
      const hits = top.map((doc) => {
        const passage = passages[doc]!;
        const sections = more
          .get(passage.page)!
          .sort((a, b) => (ranksBefore(scores[a]!, a, scores[b]!, b) ? -1 : 1))
          .slice(0, MORE_SECTIONS)
          .map((other) => passages[other]!);
        return { doc, score: pageScore(doc), page: pages[passage.page]!, passage, sections };
      });
      for (let i = 0; i < touchedCount; i++) scores[touched[i]!] = 0;
      for (let i = 0; i < pageCount; i++) bestOfPage[touchedPages[i]!] = -1;
      const queryWords = query.toLowerCase().split(/[^\p{L}\p{N}_.-]+/u);
      const terms = weighted.map((w) => w.term);
      const foundAs = weighted.flatMap((w) => (w.word ? [w.word] : []));
      const needles = [...new Set([...queryWords, ...terms, ...foundAs])].filter(
        (needle) => needle.length > 1 && !isStopword(needle),
      );
      return { total: pageCount, hits, terms, needles };
    },
  };
}

/** A synonym as its words (for snippets) and the terms they index as. */
interface SynonymPhrase {
  words: string[];
  terms: string[];
}

/** Every page's synonym groups (front matter `synonyms`), each phrase tokenized like the text. */
function synonymGroups(pages: readonly IndexedPage[]): SynonymPhrase[][] {
  return pages.flatMap((page) =>
    page.synonyms.map((group) =>
      group.map((phrase) => {
        const words: string[] = [];
        const terms: string[] = [];
        eachTerm(phrase, (term, word) => {
          terms.push(term);
          words.push(word);
        });
        return { words, terms };
      }),
    ),
  );
}
