import { join } from 'node:path';
import { ProblemError } from '@switchyard/shared';
import { PAGE_PATH_MAX_LENGTH } from '../../contract/site-contract.ts';
import { type ArtifactFile, artifactFile } from '../artifacts/artifact-file.ts';
import type { IndexedPage } from '../artifacts/site-artifacts.ts';
import { sendJson } from '../http/responses.ts';
import type { Bm25Index } from '../search/bm25-index.ts';
import type { ApiHandler } from './api-context.ts';
import { singleParam } from './query-params.ts';

export interface PageSection {
  title: string;
  anchor: string;
  url: string;
}

/** One documentation page as the page operation returns it. */
export interface PageResponse {
  path: string;
  slug: string;
  url: string;
  markdown_url: string;
  title: string;
  description: string;
  category: string;
  keywords: string[];
  sections: PageSection[];
  /** The page's markdown variant, exactly as `markdown_url` serves it. */
  markdown: string;
}

/**
 * Reduces what a client may reasonably send as a page path to `/docs/{slug}`: the page URL
 * itself (absolute or not), with a trailing slash, a `.md` suffix, a query or a `#anchor` (as
 * search results carry). Anything that does not reduce to a `/docs/…` path is no page.
 */
export function normalisePagePath(raw: string): string | undefined {
  let path = raw.trim();
  if (/^https?:\/\//i.test(path)) {
    try {
      path = new URL(path).pathname;
    } catch {
      return undefined;
    }
  }
  path = path.replace(/[?#].*$/s, '');
  path = path.replace(/\/+$/, '');
  if (path.endsWith('.md')) path = path.slice(0, -3);
  if (!path.startsWith('/docs/') || path.length <= '/docs/'.length) return undefined;
  return path;
}

function notFound(raw: string): ProblemError {
  return new ProblemError(
    'not_found',
    `There is no documentation page at "${raw.slice(0, PAGE_PATH_MAX_LENGTH)}".`,
    {
      resolution:
        'Use a path of the shape /docs/{slug} as listed by GET /api/v1/topics (or the path of a search result).',
      available_endpoints: {
        topics: 'GET /api/v1/topics',
        search: 'GET /api/v1/search?q={terms}',
      },
    },
  );
}

/** Reads documentation pages by any path {@link normalisePagePath} accepts. */
export interface PageReader {
  /** The page at `rawPath` with its markdown and metadata (URLs on `site`), or undefined when there is none. */
  read(rawPath: string, site: string): PageResponse | undefined;
}

/**
 * The one way pages are read, shared by `GET /api/v1/page` and the MCP server (tool `read_page`
 * and the page resources), so both return the same markdown. A page's markdown file is read on
 * first use and kept, like every artifact (see artifactFile).
 */
export function createPageReader(deps: { index: ArtifactFile<Bm25Index>; clientDir: string }): PageReader {
  const markdownFiles = new Map<string, ArtifactFile<string>>();
  const markdownOf = (page: IndexedPage): string => {
    let file = markdownFiles.get(page.slug);
    if (!file) {
      // Bounded by the pages of the index: only slugs the index names get an entry.
      file = artifactFile(
        join(deps.clientDir, ...`${page.path}.md`.split('/').filter(Boolean)),
        (text) => text,
        {
          describe: `markdown of ${page.path}`,
        },
      );
      markdownFiles.set(page.slug, file);
    }
    return file.get();
  };

  return {
    read(rawPath, site) {
      const path = normalisePagePath(rawPath);
      const index = deps.index.get();
      const pageIndex = path === undefined ? -1 : index.pageIndexOf(path);
      const page = index.pages[pageIndex];
      if (!page) return undefined;
      const sections: PageSection[] = index
        .passagesOf(pageIndex)
        .filter((passage) => passage.anchor !== '')
        .map((passage) => ({
          title: passage.section,
          anchor: passage.anchor,
          url: `${site}${page.path}#${passage.anchor}`,
        }));
      return {
        path: page.path,
        slug: page.slug,
        url: `${site}${page.path}`,
        markdown_url: `${site}${page.markdown_url}`,
        title: page.title,
        description: page.description,
        category: page.category,
        keywords: page.keywords,
        sections,
        markdown: markdownOf(page),
      };
    },
  };
}

/** GET /api/v1/page: one page's markdown with its metadata. */
export function pageHandler(deps: { pages: PageReader }): ApiHandler {
  return ({ res, query, site }) => {
    const raw = singleParam(query, 'path');
    if (raw === undefined || raw.trim() === '') {
      throw new ProblemError(
        'missing_parameter',
        raw === undefined ? 'The query parameter path is required.' : 'The query parameter path is empty.',
        {
          resolution:
            'Retry with path=/docs/{slug}, for example /api/v1/page?path=/docs/getting-started/quickstart.',
          extensions: { errors: [{ field: 'path', message: 'required, a page path /docs/{slug}' }] },
        },
      );
    }
    if (raw.length > PAGE_PATH_MAX_LENGTH) {
      throw new ProblemError('invalid_request', `path is longer than ${PAGE_PATH_MAX_LENGTH} characters.`, {
        extensions: { errors: [{ field: 'path', message: `at most ${PAGE_PATH_MAX_LENGTH} characters` }] },
      });
    }
    const body = deps.pages.read(raw, site);
    if (!body) throw notFound(raw);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, body);
  };
}
