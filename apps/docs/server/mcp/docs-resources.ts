import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { DocsSources } from './docs-tools.ts';
import { RPC_ERROR, rpcError } from './rpc-errors.ts';

const MARKDOWN = 'text/markdown';

/**
 * Every documentation page as a resource whose URI is its markdown URL (`{site}/docs/{slug}.md`).
 * One template with a list callback rather than one registration per page: the list is read
 * from the search index at each request, so it is always the pages the server serves.
 */
export function registerPageResources(server: McpServer, sources: DocsSources): void {
  const template = new ResourceTemplate(`${sources.site}/docs/{+slug}.md`, {
    list: () => ({
      resources: sources.index.get().pages.map((page) => ({
        uri: `${sources.site}${page.markdown_url}`,
        name: page.slug,
        title: page.title,
        description: page.description,
        mimeType: MARKDOWN,
      })),
    }),
  });
  server.registerResource(
    'documentation-page',
    template,
    {
      title: 'Switchyard documentation page',
      description: 'One page of the Switchyard documentation as markdown, at its .md URL.',
      mimeType: MARKDOWN,
    },
    (uri, variables) => {
      const slug = Array.isArray(variables.slug) ? variables.slug.join(',') : variables.slug;
      const page = slug === undefined ? undefined : sources.pages.read(`/docs/${slug}`, sources.site);
      if (!page) {
        throw rpcError(
          RPC_ERROR.resourceNotFound,
          `There is no documentation page at ${uri.href.slice(0, 300)}; resources/list names every page.`,
          { uri: uri.href.slice(0, 300) },
        );
      }
      return { contents: [{ uri: uri.href, mimeType: MARKDOWN, text: page.markdown }] };
    },
  );
}
