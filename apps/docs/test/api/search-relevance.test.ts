import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArtifact, SearchIndexFileSchema } from '../../server/artifacts/site-artifacts.ts';
import { buildBm25Index } from '../../server/search/bm25-index.ts';
import { labelledQueries, measureRelevance } from '../support/search-relevance.ts';
import { builtDist } from './support/docs-server.ts';

/**
 * The search of the real site against questions people and agents ask (search-queries.json,
 * typos and questions in words among them). An edit of content/ or of the ranking that loses a
 * right answer fails here, with the queries it lost.
 */
describe('search relevance on the labelled questions', () => {
  const index = buildBm25Index(
    parseArtifact(
      SearchIndexFileSchema,
      readFileSync(path.join(builtDist(), 'client', 'search-index.json'), 'utf8'),
    ),
  );
  const queries = labelledQueries();

  it('labels at least 50 questions, each with pages the site has', () => {
    expect(queries.length).toBeGreaterThanOrEqual(50);
    for (const { q, pages } of queries) {
      for (const page of pages) expect(index.pageIndexOf(page), `${q}: ${page}`).not.toBe(-1);
    }
  });

  it('puts a right page first for 90 % of them and among the first five for 98 %', () => {
    const relevance = measureRelevance(index, queries);
    const report = relevance.misses.map((m) => `${m.q} (rank ${m.rank ?? 'none'}): ${m.got.join(' ')}`);
    expect(relevance.recallAt5, report.join('\n')).toBeGreaterThanOrEqual(0.98);
    expect(relevance.recallAt1, report.join('\n')).toBeGreaterThanOrEqual(0.9);
  });

  it('finds the page for each misspelt word', () => {
    for (const [typo, page] of [
      ['hartbeat', '/docs/concepts/node-lifecycle'],
      ['memroy', '/docs/concepts/memory'],
      ['discovry capabilites', '/docs/concepts/discovery'],
      ['dashbord', '/docs/getting-started/dashboard'],
    ] as const) {
      const paths = index.search(typo, 5).hits.map((hit) => hit.page.path);
      expect(paths, typo).toContain(page);
    }
  });
});
