/**
 * The work one search request does in the docs server: ranking, snippets and JSON, the part the
 * "search p99 under 5 ms" goals time. `buildSnippet` is apps/docs/server/search/snippet.ts's.
 */
export function searchRequestWork(index, buildSnippet, query) {
  const outcome = index.search(query, 5);
  return JSON.stringify(
    outcome.hits.map((hit) => ({
      title: hit.page.title,
      snippet: buildSnippet(hit.passage.text, outcome.needles, hit.page.description),
    })),
  );
}
