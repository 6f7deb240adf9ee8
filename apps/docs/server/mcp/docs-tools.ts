import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProblemError } from '@switchyard/shared';
import type { z } from 'zod';
import type { DOCS_MCP_TOOLS, DocsMcpToolName } from '../../contract/mcp-contract.ts';
import type { PageReader } from '../api/page.ts';
import { buildSearchResponse, type SearchResponse } from '../api/search.ts';
import { resolveCategory, type TopicsResponse, topicsBody } from '../api/topics.ts';
import type { ArtifactFile } from '../artifacts/artifact-file.ts';
import type { ManifestFile } from '../artifacts/site-artifacts.ts';
import type { Bm25Index } from '../search/bm25-index.ts';
import { toolError } from './rpc-errors.ts';

/** What the tools and resources read: the same artifacts and page reader as the site API. */
export interface DocsSources {
  index: ArtifactFile<Bm25Index>;
  manifest: ArtifactFile<ManifestFile>;
  pages: PageReader;
  /** Public base URL of the site, without a trailing slash: every URL in an answer starts with it. */
  site: string;
}

/** The arguments of a tool once its input schema has accepted them (defaults applied). */
export type ToolArguments<Name extends DocsMcpToolName> = z.output<
  (typeof DOCS_MCP_TOOLS)[Name]['inputSchema']
>;

/** Runs each tool on arguments its schema has already accepted. */
export type DocsToolRunners = { [Name in DocsMcpToolName]: (args: ToolArguments<Name>) => CallToolResult };

function searchText(body: SearchResponse): string {
  if (body.results.length === 0) {
    return `No page matches "${body.query}". Try other or fewer words, or call list_pages to browse every page.`;
  }
  const lines = [
    `${body.results.length} of ${body.total} matching pages for "${body.query}", best first. Call read_page with a path to read the whole page.`,
    '',
  ];
  for (const result of body.results) {
    const section = result.section ? ` (section: ${result.section})` : '';
    lines.push(`${result.rank}. **${result.title}**${section}`);
    lines.push(`   url: ${result.url}`);
    lines.push(`   path: ${result.path}`);
    lines.push(`   ${result.snippet}`);
  }
  return lines.join('\n');
}

function topicsText(body: TopicsResponse): string {
  const lines = [
    body.category === null
      ? `${body.total} documentation pages, by category. Call read_page with a path to read one.`
      : `${body.total} pages in ${body.category}. Call read_page with a path to read one.`,
  ];
  for (const category of body.categories) {
    const topics = body.topics.filter((topic) => topic.category === category);
    if (topics.length === 0) continue;
    lines.push('', `## ${category}`, '');
    for (const topic of topics) lines.push(`- **${topic.title}** (${topic.path}): ${topic.description}`);
  }
  return lines.join('\n');
}

/**
 * The three tools over the site's artifacts. Each answers what the matching site API operation
 * answers: `structuredContent` is that operation's JSON (the page's without its markdown, which is
 * the text), and the text is the same answer written for a model to read.
 */
export function docsToolRunners(sources: DocsSources): DocsToolRunners {
  return {
    search_docs: ({ query, limit }) => {
      const body = buildSearchResponse(sources.index.get(), query, limit, sources.site);
      return { content: [{ type: 'text', text: searchText(body) }], structuredContent: { ...body } };
    },
    read_page: ({ path }) => {
      const page = sources.pages.read(path, sources.site);
      if (!page) {
        return toolError(
          `There is no documentation page at "${path}". Pass a path of the shape /docs/{slug}, as the results of ` +
            'search_docs and list_pages give it (for example /docs/getting-started/quickstart); search_docs finds the page on a subject.',
        );
      }
      const { markdown, ...metadata } = page;
      return { content: [{ type: 'text', text: markdown }], structuredContent: metadata };
    },
    list_pages: ({ category }) => {
      const manifest = sources.manifest.get();
      let selection: ReturnType<typeof resolveCategory>;
      try {
        selection = resolveCategory(manifest, category);
      } catch (error) {
        if (error instanceof ProblemError && error.code === 'invalid_request') {
          return toolError(`${error.message} Call list_pages again with one of them, or without a category.`);
        }
        throw error;
      }
      const body = topicsBody(manifest, selection.category, selection.categories, sources.site);
      return { content: [{ type: 'text', text: topicsText(body) }], structuredContent: { ...body } };
    },
  };
}
