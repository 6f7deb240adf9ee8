import { readFileSync } from 'node:fs';
import type { Bm25Index } from '../../server/search/bm25-index.ts';

/** A question and the pages that answer it (any one counts). */
export interface LabelledQuery {
  q: string;
  pages: string[];
}

/** The labelled questions of test/api/search-queries.json. */
export function labelledQueries(): LabelledQuery[] {
  const file = new URL('../api/search-queries.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { queries: LabelledQuery[] }).queries;
}

export interface Relevance {
  /** Share of queries whose first result is a right page. */
  recallAt1: number;
  /** Share of queries with a right page among the first five. */
  recallAt5: number;
  /** Mean of 1 / rank of the first right page (0 when none is in the first five). */
  mrr: number;
  /** The queries whose first result is not a right page, with the pages they got. */
  misses: Array<{ q: string; rank: number | null; got: string[] }>;
}

/** How well the index answers the labelled queries, at five results each as the API's default. */
export function measureRelevance(index: Bm25Index, queries: readonly LabelledQuery[]): Relevance {
  let first = 0;
  let inFive = 0;
  let reciprocal = 0;
  const misses: Relevance['misses'] = [];
  for (const { q, pages } of queries) {
    const got = index.search(q, 5).hits.map((hit) => hit.page.path);
    const at = got.findIndex((path) => pages.includes(path));
    if (at === 0) first++;
    if (at >= 0) {
      inFive++;
      reciprocal += 1 / (at + 1);
    }
    if (at !== 0) misses.push({ q, rank: at >= 0 ? at + 1 : null, got });
  }
  const n = queries.length;
  return { recallAt1: first / n, recallAt5: inFive / n, mrr: reciprocal / n, misses };
}
