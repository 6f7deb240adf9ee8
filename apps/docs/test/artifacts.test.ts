import { ERROR_CODES, ERRORS_PAGE_PATH } from '@switchyard/shared';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Nodes } from 'mdast';
import { beforeAll, describe, expect, it } from 'vitest';
import { withAbsoluteLinks } from '../src/lib/absolute-links.ts';
import { siteUrl } from '../src/lib/content-dir.ts';
import { collectHeadings, parseMarkdown } from '../src/lib/markdown-tree.ts';
import { assertBuilt, builtExists, readBuilt, sourcePages } from './support/built-site.ts';

/** Whether search indexes a source page: all do but those whose front matter says `search: false`. */
function searchable(source: string): boolean {
  const frontmatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(source)?.[1] ?? '';
  return !/^search:\s*false\s*$/m.test(frontmatter);
}

/** The markdown body of a source page, without its frontmatter. */
function bodyOf(source: string): string {
  return source.replace(/^---\r?\n[\s\S]*?\r?\n---[ \t]*\r?\n/, '');
}

/** The h2 and h3 headings of a source page, with the ids and text the site gives them. */
function sectionHeadings(slug: string) {
  const page = sourcePages().find((candidate) => candidate.slug === slug);
  if (!page) throw new Error(`no source page ${slug}`);
  return collectHeadings(parseMarkdown(bodyOf(page.source))).filter(
    (heading) => heading.depth === 2 || heading.depth === 3,
  );
}

/** The few entities Astro writes in text. */
function decodeEntities(html: string): string {
  return html
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

interface LlmsTxt {
  title: string;
  summary: string | undefined;
  details: string[];
  sections: { name: string; links: { name: string; url: string; notes: string | undefined }[] }[];
}

/**
 * Parses llms.txt as llmstxt.org defines it: an H1, an optional blockquote, free paragraphs without
 * headings, then H2 sections made only of `- [name](url)` or `- [name](url): notes` items.
 */
function parseLlmsTxt(text: string): LlmsTxt {
  const lines = text.split('\n');
  const title = /^# (\S.*)$/.exec(lines[0] ?? '')?.[1];
  if (!title) throw new Error('llms.txt must start with "# Title"');
  let i = 1;
  const skipBlank = () => {
    while (i < lines.length && lines[i]!.trim() === '') i++;
  };
  skipBlank();
  let summary: string | undefined;
  if (lines[i]?.startsWith('> ')) {
    summary = lines[i]!.slice(2);
    i++;
  }
  const details: string[] = [];
  for (; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    if (/^#/.test(lines[i]!)) throw new Error(`line ${i + 1}: only H2 sections may follow the summary`);
    if (lines[i]!.trim() !== '') details.push(lines[i]!);
  }
  const sections: LlmsTxt['sections'] = [];
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const heading = /^## (\S.*)$/.exec(line);
    if (heading) {
      sections.push({ name: heading[1]!, links: [] });
      continue;
    }
    const item = /^- \[([^\]]+)\]\(([^)\s]+)\)(?:: (.+))?$/.exec(line);
    if (!item) throw new Error(`line ${i + 1}: not a "- [name](url): notes" item: ${line}`);
    sections.at(-1)!.links.push({ name: item[1]!, url: item[2]!, notes: item[3] });
  }
  return { title, summary, details, sections };
}

const site = siteUrl();
let pages: { slug: string; source: string }[];
let docPages: { slug: string; source: string }[];

beforeAll(() => {
  assertBuilt();
  pages = sourcePages();
  docPages = pages.filter((page) => page.slug !== 'index');
});

describe('markdown variants', () => {
  it('exist for every page and repeat title, description and the body exactly as written', () => {
    expect(docPages.length).toBeGreaterThan(0);
    for (const page of pages) {
      const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*\r?\n([\s\S]*)$/.exec(page.source);
      expect(match, `${page.slug}.md has frontmatter`).not.toBeNull();
      const frontmatter = match![1]!;
      const title = /^title:\s*(.+)$/m
        .exec(frontmatter)![1]!
        .trim()
        .replace(/^(['"])(.*)\1$/, '$2');
      const variantPath = page.slug === 'index' ? '/index.md' : `/docs/${page.slug}.md`;
      const variant = readBuilt(variantPath);
      expect(variant.startsWith(`# ${title}\n\n> `), variantPath).toBe(true);
      expect(variant.split('\n')[3], `${variantPath} has a blank line after the description`).toBe('');
      expect(variant, variantPath).toContain(`\n\n${match![2]!.trim()}\n`);
      expect(variant.endsWith(`${match![2]!.trim()}\n`), variantPath).toBe(true);
    }
  });

  it('sit next to an HTML page for every page, the home page and the 404 page', () => {
    for (const page of docPages) expect(builtExists(`/docs/${page.slug}/index.html`), page.slug).toBe(true);
    expect(builtExists('/index.html')).toBe(true);
    expect(builtExists('/index.md')).toBe(true);
    expect(readBuilt('/404.html')).toContain('Page not found');
  });
});

describe('/llms.txt', () => {
  it('parses as llmstxt.org requires and links the .md variant of every page', () => {
    const llms = parseLlmsTxt(readBuilt('/llms.txt'));
    expect(llms.title).toBe('Switchyard');
    expect(llms.summary).toMatch(/control plane/);
    const urls = llms.sections.flatMap((section) => section.links.map((link) => link.url));
    for (const page of docPages) expect(urls, page.slug).toContain(`${site}/docs/${page.slug}.md`);
    for (const section of llms.sections) {
      expect(section.links.length, section.name).toBeGreaterThan(0);
      for (const link of section.links) expect(link.url.startsWith(`${site}/`), link.url).toBe(true);
    }
    const api = llms.sections.find((section) => section.name === 'API');
    expect(api?.links.map((link) => link.url)).toEqual(
      expect.arrayContaining([
        `${site}/openapi.json`,
        expect.stringContaining(`${site}/api/v1/search`),
        `${site}/docs/api/site-mcp.md`,
      ]),
    );
    expect(api?.links.find((link) => link.url === `${site}/docs/api/site-mcp.md`)?.notes).toContain(
      `${site}/mcp`,
    );
  });

  it('rejects what is not llms.txt, so the parser above really checks something', () => {
    expect(() => parseLlmsTxt('No title\n')).toThrow();
    expect(() => parseLlmsTxt('# T\n\n## S\n\n* [a](b)\n')).toThrow(/not a/);
    expect(() => parseLlmsTxt('# T\n\n### Deep\n')).toThrow(/only H2/);
  });
});

describe('/llms-full.txt', () => {
  it('holds every page in full, its links made absolute', () => {
    const full = readBuilt('/llms-full.txt');
    expect(full.startsWith('# Switchyard documentation (complete)\n')).toBe(true);
    for (const page of docPages) {
      const markdown = withAbsoluteLinks(readBuilt(`/docs/${page.slug}.md`), site, `/docs/${page.slug}`);
      expect(full, page.slug).toContain(`Source: ${site}/docs/${page.slug}\n\n${markdown.trimEnd()}`);
    }
  });

  it('has no site-relative link or bare anchor left, outside code', () => {
    const relative: string[] = [];
    const walk = (node: Nodes): void => {
      if ((node.type === 'link' || node.type === 'definition') && !/^(https?|mailto):/.test(node.url)) {
        relative.push(node.url);
      }
      if ('children' in node) for (const child of node.children) walk(child as Nodes);
    };
    walk(parseMarkdown(readBuilt('/llms-full.txt')));
    expect(relative).toEqual([]);
  });
});

describe('withAbsoluteLinks', () => {
  it('rewrites paths, anchors and definitions where written, and leaves code and other links alone', () => {
    const source = [
      'See [nodes](/docs/concepts/nodes) and [below](#verifying "title"), [ext](https://x.dev/a).',
      '',
      '`[not](/a/link)` and ![logo](/logo.svg)',
      '',
      '```md',
      '[in code](/docs/x)',
      '```',
      '',
      '[ref]: /docs/reference/errors#not_found',
    ].join('\n');
    expect(withAbsoluteLinks(source, 'https://d.dev', '/docs/concepts/webhooks')).toBe(
      [
        'See [nodes](https://d.dev/docs/concepts/nodes) and [below](https://d.dev/docs/concepts/webhooks#verifying "title"), [ext](https://x.dev/a).',
        '',
        '`[not](/a/link)` and ![logo](https://d.dev/logo.svg)',
        '',
        '```md',
        '[in code](/docs/x)',
        '```',
        '',
        '[ref]: https://d.dev/docs/reference/errors#not_found',
      ].join('\n'),
    );
  });
});

describe('/docs-ai.json', () => {
  it('lists every page with absolute html and markdown URLs', () => {
    const manifest = JSON.parse(readBuilt('/docs-ai.json'));
    expect(manifest.contractVersion).toBe('1.0');
    expect(manifest.site).toBe(site);
    expect(Number.isNaN(Date.parse(manifest.generated_at))).toBe(false);
    expect(manifest.docs.map((doc: { slug: string }) => doc.slug).sort()).toEqual(
      docPages.map((p) => p.slug).sort(),
    );
    for (const doc of manifest.docs) {
      expect(doc).toEqual({
        slug: expect.any(String),
        url: `${site}/docs/${doc.slug}`,
        markdown_url: `${site}/docs/${doc.slug}.md`,
        markdownUrl: `${site}/docs/${doc.slug}.md`,
        title: expect.stringMatching(/\S/),
        description: expect.stringMatching(/\S/),
        category: expect.stringMatching(/^(Getting started|Concepts|API reference|Operations|Reference)$/),
        keywords: expect.arrayContaining([expect.any(String)]),
      });
    }
  });
});

describe('/sitemap.xml', () => {
  it('is well-formed XML listing the home page and every page', () => {
    const xml = readBuilt('/sitemap.xml');
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false }).parse(xml);
    expect(parsed.urlset['@_xmlns']).toBe('http://www.sitemaps.org/schemas/sitemap/0.9');
    const locs = [parsed.urlset.url].flat().map((url: { loc: string }) => url.loc);
    expect(locs).toContain(`${site}/`);
    for (const page of docPages) expect(locs, page.slug).toContain(`${site}/docs/${page.slug}`);
    expect(locs).toHaveLength(docPages.length + 1);
  });
});

describe('/.well-known/ai-catalog.json', () => {
  it('is an AI Catalog 1.0 envelope pointing at openapi.json, llms.txt and docs-ai.json', () => {
    const catalog = JSON.parse(readBuilt('/.well-known/ai-catalog.json'));
    expect(catalog.specVersion).toBe('1.0');
    expect(catalog.host).toMatchObject({
      name: expect.any(String),
      displayName: expect.any(String),
      url: site,
    });
    const byUrl = new Map(catalog.entries.map((entry: { url: string }) => [entry.url, entry]));
    expect(byUrl.get(`${site}/openapi.json`)).toMatchObject({ type: 'application/openapi+json' });
    expect(byUrl.get(`${site}/llms.txt`)).toMatchObject({ type: 'text/markdown' });
    expect(byUrl.get(`${site}/docs-ai.json`)).toMatchObject({ type: 'application/json' });
    expect(byUrl.get(`${site}/.well-known/mcp/server-card.json`)).toMatchObject({
      type: 'application/json',
      tags: expect.arrayContaining(['mcp']),
      description: expect.stringContaining(`${site}/mcp`),
    });
    const identifiers = new Set<string>();
    for (const entry of catalog.entries) {
      expect(entry).toMatchObject({
        identifier: expect.any(String),
        type: expect.any(String),
        url: expect.any(String),
      });
      expect(entry.mediaType).toBe(entry.type);
      expect(identifiers.has(entry.identifier)).toBe(false);
      identifiers.add(entry.identifier);
      const path = new URL(entry.url).pathname;
      expect(path === '/openapi.json' || builtExists(path), `${path} is built`).toBe(true);
    }
  });
});

describe('/.well-known/mcp/server-card.json and /.well-known/mcp.json', () => {
  it('describe the MCP server: its endpoint, transport, no authentication and its tools', () => {
    const card = JSON.parse(readBuilt('/.well-known/mcp/server-card.json'));
    expect(card).toMatchObject({
      $schema: expect.stringMatching(/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/.*server-card/),
      name: expect.stringMatching(/^[a-z0-9.-]+\/switchyard-docs$/),
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      title: expect.any(String),
      description: expect.stringMatching(/\S/),
      remotes: [
        {
          type: 'streamable-http',
          url: `${site}/mcp`,
          supportedProtocolVersions: expect.arrayContaining(['2025-06-18']),
          authentication: { required: false, schemes: [] },
        },
      ],
      capabilities: { tools: {}, resources: {} },
      _meta: { serverInfo: { name: 'switchyard-docs' } },
    });
    expect(card.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'search_docs',
      'read_page',
      'list_pages',
    ]);
    for (const tool of card.tools) {
      expect(tool.description.length, tool.name).toBeGreaterThan(60);
      expect(tool.inputSchema, tool.name).toMatchObject({ type: 'object', additionalProperties: false });
    }
    const websitePath = new URL(card.websiteUrl).pathname;
    expect(builtExists(`${websitePath}/index.html`), websitePath).toBe(true);
    expect(JSON.parse(readBuilt('/.well-known/mcp.json'))).toEqual(card);
  });
});

describe('/.well-known/ai-plugin.json', () => {
  it('describes an unauthenticated OpenAPI plugin with absolute URLs', () => {
    const plugin = JSON.parse(readBuilt('/.well-known/ai-plugin.json'));
    expect(plugin).toMatchObject({
      schema_version: 'v1',
      name_for_human: expect.any(String),
      name_for_model: expect.stringMatching(/^[a-z0-9_]+$/),
      description_for_human: expect.any(String),
      description_for_model: expect.any(String),
      auth: { type: 'none' },
      api: { type: 'openapi', url: `${site}/openapi.json` },
      logo_url: `${site}/favicon.svg`,
      contact_email: expect.stringMatching(/^[^@\s]+@[^@\s]+$/),
      legal_info_url: expect.stringMatching(new RegExp(`^${site}/`)),
    });
    expect(plugin.name_for_human.length).toBeLessThanOrEqual(20);
    expect(plugin.name_for_model.length).toBeLessThanOrEqual(50);
  });
});

describe('/agents.md and /pricing.md', () => {
  it('tell agents the endpoints, the limit, Retry-After and to branch on code', () => {
    const agents = readBuilt('/agents.md');
    for (const text of [
      '/api/v1/search',
      '/api/v1/topics',
      '/api/v1/page',
      `${site}/mcp`,
      'search_docs',
      '120 requests per 60-second window',
    ]) {
      expect(agents).toContain(text);
    }
    expect(agents).toMatch(/Retry-After/);
    expect(agents).toMatch(/Branch on `code`/);
    expect(agents).toContain('`rate_limited` | 429');
  });

  it('state that there is no paid tier', () => {
    const pricing = readBuilt('/pricing.md');
    expect(pricing).toMatch(/There is no paid tier/);
    expect(pricing).toMatch(/Apache-2\.0/);
  });
});

describe('/search-index.json', () => {
  const index = () => JSON.parse(readBuilt('/search-index.json'));

  it('lists every page with its metadata, and passages for each but those that opt out of search', () => {
    const { version, generated_at, pages: indexed, passages } = index();
    expect(version).toBe(1);
    expect(Number.isNaN(Date.parse(generated_at))).toBe(false);
    expect(indexed.map((p: { slug: string }) => p.slug).sort()).toEqual(docPages.map((p) => p.slug).sort());
    indexed.forEach((page: Record<string, unknown>, i: number) => {
      expect(page).toEqual({
        slug: expect.any(String),
        path: `/docs/${page.slug}`,
        title: expect.any(String),
        description: expect.any(String),
        category: expect.any(String),
        keywords: expect.any(Array),
        synonyms: expect.any(Array),
        order: expect.any(Number),
        markdown_url: `/docs/${page.slug}.md`,
      });
      const source = docPages.find((p) => p.slug === page.slug)!.source;
      expect(
        passages.some((passage: { page: number }) => passage.page === i),
        String(page.slug),
      ).toBe(searchable(source));
    });
    // The generated API reference opts out, so both cases are checked.
    expect(docPages.filter((page) => !searchable(page.source)).length).toBeGreaterThan(0);
    for (const passage of passages) {
      expect(passage.page).toBeLessThan(indexed.length);
      expect(passage.text.trim()).not.toBe('');
      // Markdown syntax is stripped (code blocks stay verbatim, so only prose links are a safe probe).
      expect(passage.text).not.toMatch(/\]\(\/docs\//);
    }
  });

  it('uses anchors that are the heading ids of the rendered pages', () => {
    const { pages: indexed, passages } = index();
    for (const passage of passages) {
      const page = indexed[passage.page];
      const html = readBuilt(`${page.path}/index.html`);
      if (passage.anchor === '') expect(passage.section).toBe(page.title);
      else expect(html, `${page.path}#${passage.anchor}`).toContain(`id="${passage.anchor}"`);
    }
  });

  it('has a passage for every h2 and h3 of each rendered page, even a heading with no text of its own', () => {
    const { pages: indexed, passages } = index();
    let checked = 0;
    indexed.forEach((page: { path: string; slug: string }, i: number) => {
      // A page that opts out of search has no passages (checked above).
      if (!searchable(docPages.find((p) => p.slug === page.slug)!.source)) return;
      const html = readBuilt(`${page.path}/index.html`);
      const start = html.indexOf('<article');
      const end = html.indexOf('</article>', start);
      expect(start, page.path).toBeGreaterThanOrEqual(0);
      // The article is the page body; page navigation inside it carries no section headings.
      const article = html.slice(start, end).replace(/<nav\b[\s\S]*?<\/nav>/g, '');
      const ids = [...article.matchAll(/<h[23]\b[^>]*\bid="([^"]+)"/g)].map((match) => match[1]);
      // Every h2/h3 of the source is found in the HTML: a pattern that matched nothing would
      // otherwise make the loop below check nothing and pass.
      expect(ids, page.path).toEqual(sectionHeadings(page.slug).map((heading) => heading.id));
      const anchors = passages
        .filter((passage: { page: number }) => passage.page === i)
        .map((passage: { anchor: string }) => passage.anchor);
      for (const id of ids) expect(anchors, `${page.path}#${id}`).toContain(id);
      checked += ids.length;
    });
    expect(checked).toBeGreaterThan(0);
  });

  it('agrees with the ids the link checker computes for every heading', () => {
    let checked = 0;
    for (const page of docPages) {
      const html = readBuilt(`/docs/${page.slug}/index.html`);
      for (const heading of collectHeadings(parseMarkdown(bodyOf(page.source)))) {
        expect(html, `${page.slug}#${heading.id}`).toContain(`id="${heading.id}"`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('lists every h2 and h3 in the table of contents with its heading text as written', () => {
    let checked = 0;
    for (const page of docPages) {
      const html = readBuilt(`/docs/${page.slug}/index.html`);
      const toc = /<nav class="toc"[\s\S]*?<\/nav>/.exec(html)?.[0] ?? '';
      // The text as read: without the <wbr> break opportunities offered after each `/`.
      const links = [...toc.matchAll(/<a href="#([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)]
        .map((match) => ({ id: match[1]!, text: decodeEntities(match[2]!.replace(/<wbr>/g, '').trim()) }))
        .filter((link) => link.id !== '_top');
      const expected = sectionHeadings(page.slug).map((heading) => ({ id: heading.id, text: heading.text }));
      expect(links, page.slug).toEqual(expected);
      // Astro's own heading list turns `{` into `${` outside code (a leftover of MDX expressions).
      expect(toc, page.slug).not.toContain('${');
      checked += links.length;
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe(`${ERRORS_PAGE_PATH}`, () => {
  it('has an anchor for every code of the error catalogue', () => {
    const html = readBuilt(`${ERRORS_PAGE_PATH}/index.html`);
    for (const code of ERROR_CODES) expect(html, code).toMatch(new RegExp(`<h2[^>]* id="${code}"`));
  });
});
