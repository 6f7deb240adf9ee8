/**
 * What the docs site's MCP server offers, shared by the front server (which serves it at
 * {@link MCP_PATH}) and the Astro build (which describes it in the server card under
 * /.well-known/): its identity, the instructions a model reads, and each tool's name,
 * description and schemas. Declaring them once keeps the card and `tools/list` identical.
 */
import { z } from 'zod';
import packageJson from '../package.json' with { type: 'json' };
import {
  CATEGORIES,
  CATEGORY_MAX_LENGTH,
  PAGE_PATH_MAX_LENGTH,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
} from './site-contract.ts';

/** Where the front server answers MCP requests (Streamable HTTP, stateless). */
export const MCP_PATH = '/mcp';

/** `serverInfo.name` in the initialize answer, and the name client configurations use. */
export const MCP_SERVER_NAME = 'switchyard-docs';
export const MCP_SERVER_TITLE = 'Switchyard documentation';
/** The docs app's own version: the server changes when the app does. */
export const MCP_SERVER_VERSION: string = packageJson.version;

export const MCP_SERVER_DESCRIPTION =
  'Search and read the Switchyard documentation: ranked search over every section, whole pages as markdown, ' +
  'and the list of pages by category. Read-only, no authentication.';

/** The `instructions` of the initialize answer: when a model should use which tool. */
export const MCP_INSTRUCTIONS = [
  'This server answers questions about Switchyard, an open-source control plane that runs AI agents as HTTP services, from its documentation.',
  'Use search_docs first, with the words of the question: it ranks sections of every page (typos are forgiven) and returns the path and url of each hit.',
  'Then call read_page with the path of the best result to get the whole page as markdown before you answer; quote from it and cite its url.',
  'Use list_pages to browse every page, or the pages of one category, when you need an overview rather than an answer.',
  'Every page is also a resource (text/markdown) at its .md URL.',
  'Requests count against the budget of the documentation API for each client; on HTTP 429 wait Retry-After seconds.',
].join(' ');

/** Every tool here only reads the published documentation. */
const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

const SectionLinkSchema = z.object({
  section: z.string(),
  anchor: z.string(),
  url: z.string(),
});

const SearchResultSchema = z.object({
  rank: z.number().int(),
  score: z.number(),
  title: z.string(),
  section: z.string(),
  snippet: z.string(),
  url: z.string().describe('The page URL with the anchor of the best matching section; cite this.'),
  path: z.string().describe('The page path, as read_page accepts it.'),
  anchor: z.string(),
  markdown_url: z.string(),
  category: z.string(),
  sections: z.array(SectionLinkSchema).describe('Other sections of the same page that matched, best first.'),
});

const PageMetadataSchema = z.object({
  path: z.string(),
  slug: z.string(),
  url: z.string(),
  markdown_url: z.string(),
  title: z.string(),
  description: z.string(),
  category: z.string(),
  keywords: z.array(z.string()),
  sections: z.array(z.object({ title: z.string(), anchor: z.string(), url: z.string() })),
});

const TopicSchema = z.object({
  title: z.string(),
  description: z.string(),
  url: z.string(),
  path: z.string(),
  markdown_url: z.string(),
  category: z.string(),
  keywords: z.array(z.string()),
});

/**
 * The tools, by name. Input schemas are strict (an unknown argument is refused, not ignored) and
 * carry the bounds of the site API's parameters; output schemas describe `structuredContent`,
 * which is the same object the matching site API operation answers.
 */
export const DOCS_MCP_TOOLS = {
  search_docs: {
    title: 'Search the Switchyard docs',
    description:
      'Full-text search over every section of every Switchyard documentation page (BM25, forgiving typos). ' +
      'Returns ranked pages, each with its best matching section, a snippet, the page url to cite and the path to pass to read_page. ' +
      'Use it first for any question about Switchyard; same results as GET /api/v1/search.',
    inputSchema: z.strictObject({
      query: z
        .string()
        .trim()
        .min(1)
        .max(SEARCH_QUERY_MAX_LENGTH)
        .describe(
          'What to look for, in plain words, e.g. "retry a failed execution" or "webhook signature".',
        ),
      limit: z
        .number()
        .int()
        .min(SEARCH_LIMIT_MIN)
        .max(SEARCH_LIMIT_MAX)
        .default(SEARCH_LIMIT_DEFAULT)
        .describe(`How many pages to return, ${SEARCH_LIMIT_MIN} to ${SEARCH_LIMIT_MAX}.`),
    }),
    outputSchema: z.object({
      query: z.string(),
      limit: z.number().int(),
      total: z.number().int().describe('How many pages matched, of which the first `limit` are returned.'),
      results: z.array(SearchResultSchema),
    }),
    annotations: READ_ONLY,
  },
  read_page: {
    title: 'Read a Switchyard docs page',
    description:
      'Returns one documentation page as markdown, with its title, category and section anchors. ' +
      'Pass the path of a search_docs or list_pages result (/docs/{slug}); a full page URL, a .md URL or a #anchor works too. ' +
      'Same text as GET /api/v1/page.',
    inputSchema: z.strictObject({
      path: z
        .string()
        .trim()
        .min(1)
        .max(PAGE_PATH_MAX_LENGTH)
        .describe('The page, e.g. /docs/getting-started/quickstart.'),
    }),
    outputSchema: PageMetadataSchema,
    annotations: READ_ONLY,
  },
  list_pages: {
    title: 'List the Switchyard docs pages',
    description:
      'Lists every documentation page (title, description, path, url, category, keywords), or the pages of one category. ' +
      'Use it to browse or to find a page by its title; same list as GET /api/v1/topics.',
    inputSchema: z.strictObject({
      category: z
        .string()
        .max(CATEGORY_MAX_LENGTH)
        .optional()
        .describe(`Only the pages of this category: ${CATEGORIES.join(', ')}. Omit it for every page.`),
    }),
    outputSchema: z.object({
      total: z.number().int(),
      category: z
        .string()
        .nullable()
        .describe('The category applied, as the site spells it; null when none.'),
      categories: z.array(z.string()).describe('Every category the site has pages in.'),
      topics: z.array(TopicSchema),
    }),
    annotations: READ_ONLY,
  },
} as const;

export type DocsMcpToolName = keyof typeof DOCS_MCP_TOOLS;

/** The MCP endpoint of a site, e.g. https://docs.example.dev/mcp. */
export function mcpEndpointUrl(site: string): string {
  return `${site}${MCP_PATH}`;
}
