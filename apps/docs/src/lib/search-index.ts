import { generatedAt } from './build-info.ts';
import { pagePassages } from './passages.ts';
import type { DocPage } from './site-pages.ts';

/**
 * `/search-index.json`: the passage index the site API's BM25 search loads (see the contract).
 * Every page is listed (the page and topics operations read them from here); a page that says
 * `search: false` has no passages, so no query finds it.
 */
export function searchIndex(pages: DocPage[]) {
  const passages = pages.flatMap((page, index) =>
    page.searchable
      ? pagePassages(page.title, page.body).map((passage) => ({ page: index, ...passage }))
      : [],
  );
  return {
    version: 1 as const,
    generated_at: generatedAt,
    pages: pages.map((page) => ({
      slug: page.slug,
      path: page.path,
      title: page.title,
      description: page.description,
      category: page.category,
      keywords: page.keywords,
      synonyms: page.synonyms,
      order: page.order,
      markdown_url: page.markdownPath,
    })),
    passages,
  };
}
