import type { IndexedPage, Passage, SearchIndexFile } from '../artifacts/site-artifacts.ts';
import { isStopword, JOINER, tokenize } from './tokenize.ts';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * How much one occurrence of a term counts in each part of a passage (BM25F-style: weighted term
 * frequencies feed one saturation). A heading or title that names the term is stronger evidence
 * than one mention in running text; the page's title and keywords are added to each of its
 * passages so a query naming the page finds its sections.
 */
const FIELD_WEIGHTS = { pageTitle: 2, section: 3, keywords: 1.5, description: 1, text: 1 } as const;

interface Posting {
  idf: number;
  docs: Uint32Array;
  tfs: Float64Array;
}

/** One ranked passage. */
export interface SearchHit {
  doc: number;
  score: number;
  page: IndexedPage;
  passage: Passage;
}

export interface SearchOutcome {
  /** Number of passages that matched at least one term. */
  total: number;
  hits: SearchHit[];
  /** The distinct terms the query was reduced to. */
  terms: string[];
  /** Lower-cased words of the query and their stems, for placing snippets. */
  needles: string[];
}

export interface Bm25Index {
  readonly pages: readonly IndexedPage[];
  readonly passages: readonly Passage[];
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

function addTerms(counts: Map<string, number>, text: string, weight: number): void {
  for (const term of tokenize(text)) counts.set(term, (counts.get(term) ?? 0) + weight);
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

  passages.forEach((passage, doc) => {
    const page = pages[passage.page]!;
    const counts = new Map<string, number>();
    addTerms(counts, page.title, FIELD_WEIGHTS.pageTitle);
    addTerms(counts, page.keywords.join(' '), FIELD_WEIGHTS.keywords);
    if (passage.anchor === '') addTerms(counts, page.description, FIELD_WEIGHTS.description);
    // The passage before the first heading is titled with the page title: count that once.
    if (passage.section !== page.title) addTerms(counts, passage.section, FIELD_WEIGHTS.section);
    addTerms(counts, passage.text, FIELD_WEIGHTS.text);
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

  // Scratch space reused by every query: requests run one at a time on the event loop, and
  // reusing it keeps a query from allocating per passage.
  const pageIndexByPath = new Map(pages.map((page, i) => [page.path, i]));
  const passagesByPage = pages.map(() => [] as Passage[]);
  for (const passage of passages) passagesByPage[passage.page]!.push(passage);

  const scores = new Float64Array(n);
  const touched = new Uint32Array(n);

  return {
    pages,
    passages,
    pageIndexOf: (path) => pageIndexByPath.get(path) ?? -1,
    passagesOf: (pageIndex) => passagesByPage[pageIndex] ?? [],
    search(query, limit) {
      const terms = [...new Set(tokenize(query))];
      let touchedCount = 0;
      for (const term of terms) {
        const posting = postingsByTerm.get(term);
        if (!posting) continue;
        const { idf, docs, tfs } = posting;
        // A whole identifier from the query (`workflow_id`, `X-API-Key`) stands for all of its
        // parts at once, so it weighs as many query terms as it has parts: otherwise a short
        // passage repeating the parts outranks a long one (a settings table) naming it exactly.
        const weight = term.split(JOINER).length;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!;
          const tf = tfs[i]!;
          if (scores[doc] === 0) touched[touchedCount++] = doc;
          scores[doc]! += (weight * idf * (tf * (BM25_K1 + 1))) / (tf + norms[doc]!);
        }
      }
      // Keep the best `limit` in a small sorted array: limit is at most 20, so insertion beats
      // sorting every matching passage.
      const top: number[] = [];
      for (let i = 0; i < touchedCount; i++) {
        const doc = touched[i]!;
        const score = scores[doc]!;
        let at = top.length;
        while (at > 0 && ranksBefore(score, doc, scores[top[at - 1]!]!, top[at - 1]!)) at--;
        if (at === limit) continue;
        top.splice(at, 0, doc);
        if (top.length > limit) top.pop();
      }
      const hits = top.map((doc) => {
        const passage = passages[doc]!;
        return { doc, score: scores[doc]!, page: pages[passage.page]!, passage };
      });
      for (let i = 0; i < touchedCount; i++) scores[touched[i]!] = 0;
      const words = query.toLowerCase().split(/[^\p{L}\p{N}_.-]+/u);
      const needles = [...new Set([...words, ...terms])].filter((n) => n.length > 1 && !isStopword(n));
      return { total: touchedCount, hits, terms, needles };
    },
  };
}
