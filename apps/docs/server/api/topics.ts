import { ProblemError } from '@switchyard/shared';
import { CATEGORY_MAX_LENGTH, CATEGORIES as DOCUMENTATION_CATEGORIES } from '../../contract/site-contract.ts';
import type { ArtifactFile } from '../artifacts/artifact-file.ts';
import type { ManifestFile } from '../artifacts/site-artifacts.ts';
import { sendJsonText } from '../http/responses.ts';
import type { ApiHandler } from './api-context.ts';
import { singleParam } from './query-params.ts';

/** One documentation page as the topics operation lists it. */
export interface Topic {
  title: string;
  description: string;
  url: string;
  path: string;
  markdown_url: string;
  category: string;
  keywords: string[];
}

export interface TopicsResponse {
  total: number;
  /** The category filter that was applied, as the site spells it; null when none. */
  category: string | null;
  /** Every category the site has pages in, in site order. */
  categories: string[];
  topics: Topic[];
}

/** "API reference", "api-reference" and "api_reference" name the same category. */
function categoryKey(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
}

function siteCategories(manifest: ManifestFile): string[] {
  const present = new Set(manifest.docs.map((doc) => doc.category));
  const known: string[] = DOCUMENTATION_CATEGORIES.filter((c) => present.has(c));
  const others = [...present].filter((c) => !known.includes(c)).sort();
  return [...known, ...others];
}

/** The topics answer for a category already resolved by {@link resolveCategory}. */
export function topicsBody(
  manifest: ManifestFile,
  category: string | null,
  categories: string[],
  site: string,
): TopicsResponse {
  const topics: Topic[] = manifest.docs
    .filter((doc) => category === null || doc.category === category)
    .map((doc) => {
      const path = `/docs/${doc.slug}`;
      return {
        title: doc.title,
        description: doc.description,
        url: `${site}${path}`,
        path,
        markdown_url: `${site}${path}.md`,
        category: doc.category,
        keywords: doc.keywords,
      };
    });
  return { total: topics.length, category, categories, topics };
}

/**
 * The category a client asked for, as the site spells it (null when none or blank), with every
 * category the site has pages in. An unknown category is an `invalid_request` naming the valid
 * ones. Shared by `GET /api/v1/topics` and the MCP tool `list_pages`.
 */
export function resolveCategory(
  manifest: ManifestFile,
  requested: string | undefined,
): { category: string | null; categories: string[] } {
  const categories = siteCategories(manifest);
  if (requested === undefined || requested.trim() === '') return { category: null, categories };
  const wanted = categoryKey(requested);
  const valid = [...new Set<string>([...DOCUMENTATION_CATEGORIES, ...categories])];
  const match = valid.find((c) => categoryKey(c) === wanted);
  if (!match) {
    throw new ProblemError(
      'invalid_request',
      `There is no category "${requested.slice(0, CATEGORY_MAX_LENGTH)}". Valid categories: ${valid.join(', ')}.`,
      {
        resolution: 'Retry with one of the categories listed in valid_categories, or without category.',
        extensions: {
          valid_categories: valid,
          errors: [{ field: 'category', message: 'unknown category' }],
        },
      },
    );
  }
  return { category: match, categories };
}

/** GET /api/v1/topics: the index of every page, optionally of one category. */
export function topicsHandler(deps: { manifest: ArtifactFile<ManifestFile> }): ApiHandler {
  // The answer only changes with the manifest file, and a 1,000-page index is a few hundred KB of
  // JSON: serialise it once per manifest version and filter, not once per request.
  const rendered = new WeakMap<ManifestFile, Map<string, Buffer>>();
  return ({ res, query, site }) => {
    const requested = singleParam(query, 'category');
    if (requested !== undefined && requested.length > CATEGORY_MAX_LENGTH) {
      throw new ProblemError(
        'invalid_request',
        `category is longer than ${CATEGORY_MAX_LENGTH} characters.`,
        {
          extensions: {
            errors: [{ field: 'category', message: `at most ${CATEGORY_MAX_LENGTH} characters` }],
          },
        },
      );
    }
    const manifest = deps.manifest.get();
    const { category, categories } = resolveCategory(manifest, requested);
    let bySelection = rendered.get(manifest);
    if (!bySelection) {
      bySelection = new Map();
      rendered.set(manifest, bySelection);
    }
    const key = `${site}\n${category ?? ''}`;
    let text = bySelection.get(key);
    if (text === undefined) {
      text = Buffer.from(JSON.stringify(topicsBody(manifest, category, categories, site)));
      bySelection.set(key, text);
    }
    res.setHeader('Cache-Control', 'no-store');
    sendJsonText(res, 200, text);
  };
}
