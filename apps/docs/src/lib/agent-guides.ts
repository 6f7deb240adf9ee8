import { ERROR_CATALOGUE, ERRORS_PAGE_PATH, SITE_ERROR_CODES } from '@switchyard/shared';
import { MCP_PATH } from '../../contract/mcp-contract.ts';
import { absolute, LICENSE, SITE_NAME, SITE_SUMMARY } from './build-info.ts';
import type { DocPage } from './site-pages.ts';

function pageLink(site: string, pages: DocPage[], pattern: RegExp, fallback: string): string {
  const page = pages.find((candidate) => pattern.test(candidate.slug));
  return page ? `[${page.title}](${absolute(site, page.markdownPath)})` : fallback;
}

/** `/agents.md`: guidance for autonomous agents on using Switchyard and this documentation API. */
export function agentsMd(site: string, pages: DocPage[]): string {
  const codes = SITE_ERROR_CODES.map((code) => {
    const entry = ERROR_CATALOGUE[code];
    return `| \`${code}\` | ${entry.status} | ${entry.resolution} |`;
  }).join('\n');
  const start = pages.find((page) => page.category === 'Getting started');
  const siteApi = pageLink(site, pages, /(^|\/)site-api$/, 'the site API page');
  const mcpPage = pageLink(site, pages, /(^|\/)site-mcp$/, 'the docs MCP server page');
  const versioning = pageLink(site, pages, /(^|\/)versioning$/, 'the versioning and deprecation policy');
  return `# ${SITE_NAME} for agents

> How an autonomous agent should use ${SITE_NAME} and the API of this documentation site: what to call, the limits, and how to handle errors.

## When to use ${SITE_NAME}

${SITE_SUMMARY}

Use it when you need to run an agent as a long-lived HTTP service that other programs call: registering
reasoners and skills, routing calls by target, chaining executions into workflows, keeping memory
between calls, waiting for human approval, or delivering results through signed webhooks. It is not a
model host and not a chat UI. ${start ? `Start with [${start.title}](${absolute(site, start.markdownPath)}).` : ''}

## When to use this documentation API

Use it to answer questions about ${SITE_NAME} from the documentation instead of guessing: search first,
then read the page the best result points to, and cite its \`url\`. Every page is also plain markdown:
append \`.md\` to a \`/docs/...\` URL, or send \`Accept: text/markdown\` to the page URL.

| Operation | Request | Use it to |
|---|---|---|
| searchDocumentation | \`GET ${absolute(site, '/api/v1/search')}?q={terms}&limit={1..20}\` | rank passages by BM25; each result has the page \`url\` (with \`#anchor\`), the \`path\` for the page operation, title, section, snippet and score. \`limit\` defaults to 5. |
| listDocumentationTopics | \`GET ${absolute(site, '/api/v1/topics')}?category={category}\` | list every page (title, description, URL, category, keywords); \`category\` is optional. |
| getDocumentationPage | \`GET ${absolute(site, '/api/v1/page')}?path=/docs/{slug}\` | read one page as markdown with its metadata. |
| createRunShare | \`POST ${absolute(site, '/api/v1/shares')}\` | publish a run bundle to a public permalink (\`/s/{id}\`). |

The exact request and response schemas are in [openapi.json](${absolute(site, '/openapi.json')}); ${siteApi} explains them
with examples.
\`/api/agent/search\`, \`/api/agent/topics\` and \`/api/agent/page\` are stable aliases of the three read
operations; they answer with \`Link: <...>; rel="successor-version"\` pointing at the \`/api/v1\` path, which
you should prefer.

### Over MCP

The same search and pages are offered by a Model Context Protocol server at \`${absolute(site, MCP_PATH)}\`
(Streamable HTTP, stateless, no authentication): tools \`search_docs\`, \`read_page\` and \`list_pages\`,
and every page as a \`text/markdown\` resource at its \`.md\` URL. Connect to it if your host speaks MCP;
${mcpPage} shows the client configuration. Its server card is at
[/.well-known/mcp/server-card.json](${absolute(site, '/.well-known/mcp/server-card.json')}).

No authentication is needed. Good practice:

1. Search with the user's own terms, \`limit\` 5 to 10. Open the top result's \`path\` with the page operation.
2. Quote from the markdown you read and link the page \`url\`; do not invent endpoints or fields.
3. For a complete offline copy, fetch [llms-full.txt](${absolute(site, '/llms-full.txt')}) once instead of crawling pages.

## Limits

- API budget: **120 requests per 60-second window, per client address**, shared by every endpoint
  under \`/api/\` and the MCP server at \`/mcp\`. Pages, their \`.md\` variants, llms files and manifests have a budget of their own,
  1200 per 60 seconds, so reading pages never spends the API's.
- Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` (seconds) and
  \`RateLimit-Policy\` for the budget it was counted against (\`120;w=60\` on the API). Slow down when
  \`RateLimit-Remaining\` gets low.
- Search \`q\` needs at least 1 character; \`limit\` is 1 to 20 (default 5).
- Share bodies are limited in size (1 MiB unless the operator changed it); larger bodies get 413.
- Over a budget you get **429** with code \`rate_limited\`, a \`budget\` member (\`api\` or \`pages\`) and a
  \`Retry-After\` header: wait that many seconds before the next request to that budget, then continue
  with backoff. Do not retry immediately.

## Errors

Every non-2xx response is \`application/problem+json\` (RFC 9457) with \`type\`, \`title\`, \`status\`, \`detail\`,
\`instance\`, \`code\`, \`resolution\` and \`documentation_url\`. **Branch on \`code\`, never on \`detail\`** (it is
prose and may change). Treat a code you do not know as a generic failure of its HTTP status class.

| code | status | what to do |
|---|---|---|
${codes}

Retry only 429 (after \`Retry-After\`), 502 and 503 (with backoff); fix the request for other 4xx codes.
Each code is explained at [${absolute(site, ERRORS_PAGE_PATH)}](${absolute(site, `${ERRORS_PAGE_PATH}.md`)}).

## Versioning

The API is versioned in the path (\`/api/v1\`); every response carries \`X-API-Version\`. Additive changes
ship within a version, so ignore fields you do not know. A retiring version announces itself at least 180
days ahead with \`Deprecation\`, \`Sunset\` and \`Link; rel="successor-version"\` headers; nothing is scheduled
for removal today. See ${versioning}.

## More

- [llms.txt](${absolute(site, '/llms.txt')}): index of every page as markdown.
- [docs-ai.json](${absolute(site, '/docs-ai.json')}): the page manifest as JSON.
- [pricing.md](${absolute(site, '/pricing.md')}): ${SITE_NAME} is free and open source (${LICENSE}).
`;
}

/** `/pricing.md`: there is no paid tier, stated plainly for people and agents. */
export function pricingMd(site: string): string {
  return `# ${SITE_NAME} pricing

> ${SITE_NAME} is free and open source under the ${LICENSE} license. There is no paid tier.

## Plans

| Plan | Price | What you get |
|---|---|---|
| Open source | $0 | The whole control plane and documentation site, self-hosted, with every feature. |

There are no paid plans, no usage-based charges, no seat limits and no feature gates. You run
${SITE_NAME} on your own infrastructure; its costs are those of the machines and the PostgreSQL database
you run it on.

## The documentation API

The API of this site (${absolute(site, '/api/v1')}) is free to use without an account or key, within a
budget of 120 requests per 60 seconds per client address.

## License

${LICENSE}: you may use, modify and redistribute ${SITE_NAME}, including commercially, under the terms of
the license.

## Machine-readable summary

- pricing_model: free
- paid_tier: none
- price: 0
- currency: USD
- license: ${LICENSE}
- open_source: true
`;
}
