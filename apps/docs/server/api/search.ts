import { ProblemError } from '@switchyard/shared';
import { LRUCache } from 'lru-cache';
import {
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
} from '../../contract/site-contract.ts';
import type { ArtifactFile } from '../artifacts/artifact-file.ts';
import type { Encoding } from '../http/compression.ts';
import { sendJsonText } from '../http/responses.ts';
import type { Bm25Index } from '../search/bm25-index.ts';
import { buildSnippet } from '../search/snippet.ts';
import type { ApiHandler } from './api-context.ts';
import { singleParam } from './query-params.ts';

/** One ranked passage as the search operation returns it. */
export interface SearchResult {
  rank: number;
  score: number;
  title: string;
  section: string;
  snippet: string;
  url: string;
  path: string;
  anchor: string;
  markdown_url: string;
  category: string;
  /** Other sections of the same page that matched, best first. */
  sections: Array<{ section: string; anchor: string; url: string }>;
}

export interface SearchResponse {
  query: string;
  limit: number;
  total: number;
  results: SearchResult[];
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return SEARCH_LIMIT_DEFAULT;
  const value = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= SEARCH_LIMIT_MIN && value <= SEARCH_LIMIT_MAX)) {
    throw new ProblemError(
      'invalid_request',
      `limit must be an integer from ${SEARCH_LIMIT_MIN} to ${SEARCH_LIMIT_MAX}; got "${raw.slice(0, 40)}".`,
      {
        extensions: {
          errors: [{ field: 'limit', message: `integer ${SEARCH_LIMIT_MIN}-${SEARCH_LIMIT_MAX}` }],
        },
      },
    );
  }
  return value;
}

function parseQuery(raw: string | undefined): string {
  const q = raw?.trim() ?? '';
  if (q === '') {
    throw new ProblemError(
      'missing_parameter',
      raw === undefined ? 'The query parameter q is required.' : 'The query parameter q is empty.',
      {
        resolution: 'Retry with a non-empty q, for example /api/v1/search?q=rate+limits.',
        extensions: { errors: [{ field: 'q', message: 'required, at least 1 character' }] },
      },
    );
  }
  if (q.length > SEARCH_QUERY_MAX_LENGTH) {
    throw new ProblemError(
      'invalid_request',
      `q is ${q.length} characters long; the maximum is ${SEARCH_QUERY_MAX_LENGTH}.`,
      { extensions: { errors: [{ field: 'q', message: `at most ${SEARCH_QUERY_MAX_LENGTH} characters` }] } },
    );
  }
  return q;
}

function sectionUrl(site: string, path: string, anchor: string): string {
  return `${site}${path}${anchor ? `#${anchor}` : ''}`;
}

/**
 * The search answer for a valid query and limit: BM25 over every passage, one result per page
 * (its best passage, its other matching sections listed with it), with snippets and URLs on
 * `site`. Shared by `GET /api/v1/search` and the MCP tool `search_docs`, so both rank alike.
 */
export function buildSearchResponse(
  index: Bm25Index,
  query: string,
  limit: number,
  site: string,
): SearchResponse {
  const outcome = index.search(query, limit);
  return {
    query,
    limit,
    total: outcome.total,
    results: outcome.hits.map((hit, i) => ({
      rank: i + 1,
      score: Math.round(hit.score * 10_000) / 10_000,
      title: hit.page.title,
      section: hit.passage.section,
      snippet: buildSnippet(hit.passage.text, outcome.needles, hit.page.description),
      url: sectionUrl(site, hit.page.path, hit.passage.anchor),
      path: hit.page.path,
      anchor: hit.passage.anchor,
      markdown_url: `${site}${hit.page.markdown_url}`,
      category: hit.page.category,
      sections: hit.sections.map((other) => ({
        section: other.section,
        anchor: other.anchor,
        url: sectionUrl(site, hit.page.path, other.anchor),
      })),
    })),
  };
}

/** A search answer as sent: its JSON, and its compressed forms once a client asked for them. */
interface CachedAnswer {
  json: Buffer;
  forms: Map<Encoding, Buffer>;
}

/** Distinct queries whose answers are kept. */
const ANSWER_CACHE_ENTRIES = 1000;
/**
 * Bytes the kept answers may hold, counted as twice the JSON (its compressed forms are smaller
 * than it): a few KB an answer, and a query at the largest limit carries 20 results with snippets.
 */
const ANSWER_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * GET /api/v1/search: BM25 over every passage of every page, one result per page (its best
 * passage, its other matching sections listed with it). An answer depends only on the query,
 * the limit, the index and the site, so the latest answers are kept, serialised and compressed:
 * agents and the search box send the same queries over and over, and ranking, snippets, JSON and
 * brotli were nearly all of a search request's CPU time (bench/docs-api/README.md). The cache
 * starts over when the index is replaced.
 */
export function searchHandler(deps: { index: ArtifactFile<Bm25Index> }): ApiHandler {
  const answers = new LRUCache<string, CachedAnswer>({
    max: ANSWER_CACHE_ENTRIES,
    maxSize: ANSWER_CACHE_BYTES,
    sizeCalculation: (answer) => 2 * answer.json.length,
  });
  let answersOf: Bm25Index | undefined;
  return ({ res, query, site }) => {
    const q = parseQuery(singleParam(query, 'q'));
    const limit = parseLimit(singleParam(query, 'limit'));
    const index = deps.index.get();
    if (index !== answersOf) {
      answers.clear();
      answersOf = index;
    }
    const key = `${limit} ${site} ${q}`;
    let answer = answers.get(key);
    if (!answer) {
      const body = buildSearchResponse(index, q, limit, site);
      answer = { json: Buffer.from(JSON.stringify(body)), forms: new Map() };
      answers.set(key, answer);
    }
    res.setHeader('Cache-Control', 'no-store');
    sendJsonText(res, 200, answer.json, undefined, answer.forms);
  };
}
