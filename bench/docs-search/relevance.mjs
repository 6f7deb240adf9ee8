#!/usr/bin/env node
// How well and how fast the docs search answers: recall@1, recall@5 and MRR of the site API's
// ranking on the labelled questions (apps/docs/test/api/search-queries.json) over the real build,
// then each question's cost on a 1,000-page index (the real pages and generated ones,
// bench/docs-api/corpus.mjs), as p50 and p99 of the per-question medians and as a ratio to the
// 5 ms goal, and the cost of one question written as the site has it against one misspelt.
//
// Usage: node bench/docs-search/relevance.mjs [--pages 1000] [--rounds 40]
// Needs the docs build (npm run build -w @switchyard/docs).
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { register } from 'tsx/esm/api';
import { generatedPage } from '../docs-api/corpus.mjs';
import { searchRequestWork } from '../docs-api/search-work.mjs';

const root = path.resolve(import.meta.dirname, '../..');
const docsApp = path.join(root, 'apps/docs');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const pageCount = option('--pages', 1000);
const rounds = option('--rounds', 40);
const P99_GOAL_MS = 5;

register();
const { buildBm25Index } = await import(path.join(docsApp, 'server/search/bm25-index.ts'));
const { buildSnippet } = await import(path.join(docsApp, 'server/search/snippet.ts'));
const { parseArtifact, SearchIndexFileSchema } = await import(
  path.join(docsApp, 'server/artifacts/site-artifacts.ts')
);
const { labelledQueries, measureRelevance } = await import(
  path.join(docsApp, 'test/support/search-relevance.ts')
);

const site = parseArtifact(
  SearchIndexFileSchema,
  readFileSync(path.join(docsApp, 'dist/client/search-index.json'), 'utf8'),
);
const queries = labelledQueries();

const relevance = measureRelevance(buildBm25Index(site), queries);
console.log(
  `Relevance on ${queries.length} labelled questions, ${site.pages.length} pages (goals: recall@5 0.98, recall@1 0.9)`,
);
console.log(
  `  recall@1 ${relevance.recallAt1.toFixed(3)}  recall@5 ${relevance.recallAt5.toFixed(3)}  MRR ${relevance.mrr.toFixed(3)}`,
);
for (const miss of relevance.misses) {
  console.log(`  not first: "${miss.q}" (right page at ${miss.rank ?? 'none'}): ${miss.got.join(' ')}`);
}

/** The real pages, then generated ones up to `count`, split into passages at `## ` headings. */
function largeIndex(count) {
  const pages = [...site.pages];
  const passages = [...site.passages];
  for (let i = pages.length; i < count; i++) {
    const [, front, body] = /^---\n([\s\S]*?)\n---\n\n([\s\S]*)$/.exec(generatedPage(i));
    const field = (name) => new RegExp(`^${name}: (.*)$`, 'm').exec(front)[1];
    const page =
      pages.push({
        slug: `generated/page-${i}`,
        path: `/docs/generated/page-${i}`,
        title: field('title'),
        description: field('description'),
        category: field('category'),
        keywords: field('keywords').slice(1, -1).split(', '),
        synonyms: [],
        order: i,
        markdown_url: `/docs/generated/page-${i}.md`,
      }) - 1;
    const parts = body.split(/^## /m);
    passages.push({ page, section: pages[page].title, anchor: '', text: parts[0].trim() });
    for (const part of parts.slice(1)) {
      const [heading, ...rest] = part.split('\n');
      passages.push({
        page,
        section: heading,
        anchor: heading.replace(/\s+/g, '-'),
        text: rest.join('\n').trim(),
      });
    }
  }
  return { ...site, pages, passages };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};

/** Each question's median cost over the rounds (search, snippets, JSON: a request's work). */
function costs(index, questions) {
  const samples = questions.map(() => []);
  for (let round = -2; round < rounds; round++) {
    questions.forEach((q, i) => {
      const started = performance.now();
      searchRequestWork(index, buildSnippet, q);
      if (round >= 0) samples[i].push(performance.now() - started);
    });
  }
  return samples.map((s) => percentile(s, 0.5));
}

const buildStarted = performance.now();
const large = buildBm25Index(largeIndex(pageCount));
const buildMs = performance.now() - buildStarted;
const medians = costs(
  large,
  queries.map((query) => query.q),
);
const p50 = percentile(medians, 0.5);
const p99 = percentile(medians, 0.99);
const [asWritten, misspelt] = costs(large, ['heartbeat', 'hartbeat']);
console.log(
  `\nCost per question on ${large.pages.length} pages, ${large.passages.length} passages (index built in ${Math.round(buildMs)} ms; load ${loadavg()[0].toFixed(2)})`,
);
console.log(
  `  p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms = ${(p99 / P99_GOAL_MS).toFixed(2)}x the ${P99_GOAL_MS} ms goal`,
);
console.log(
  `  "heartbeat" ${asWritten.toFixed(3)} ms, "hartbeat" ${misspelt.toFixed(3)} ms: a typo costs ${(misspelt / asWritten).toFixed(2)}x`,
);
