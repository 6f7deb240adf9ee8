import { type Dirent, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Nodes } from 'mdast';
import { parse as parseYaml } from 'yaml';
import { MCP_PATH } from '../../contract/mcp-contract.ts';
import { splitFrontmatter } from './markdown-source.ts';
import { collectHeadings, parseMarkdown } from './markdown-tree.ts';
import { CATEGORIES, PageFrontmatterSchema } from './page-schema.ts';

/** One problem found in the corpus, tied to the file (and line, when known) that has it. */
export interface ContentProblem {
  file: string;
  line?: number;
  message: string;
}

/** Site paths outside /docs that exist on every build, so pages may link to them. */
const GENERATED_PATHS = new Set([
  '/',
  '/index.md',
  '/llms.txt',
  '/llms-full.txt',
  '/docs-ai.json',
  '/agents.md',
  '/pricing.md',
  '/openapi.json',
  '/sitemap.xml',
  '/search-index.json',
  '/.well-known/ai-catalog.json',
  '/.well-known/ai-plugin.json',
  '/.well-known/mcp.json',
  '/.well-known/mcp/server-card.json',
]);

/** Path prefixes answered by the front server at run time (the site API and share permalinks). */
const DYNAMIC_PREFIXES = ['/api/', '/s/', '/share/'];

/** Paths answered by the front server at run time besides those prefixes: the MCP server. */
const DYNAMIC_PATHS = new Set([MCP_PATH]);

/** The site's static files (images, the favicon), served from the root as they are. */
const PUBLIC_DIR = fileURLToPath(new URL('../../public', import.meta.url));

interface ScannedPage {
  file: string;
  slug: string;
  anchors: Set<string>;
  links: { url: string; line: number }[];
}

/** Every markdown file below `dir`, as paths relative to it with forward slashes, sorted. */
export function listMarkdownFiles(dir: string): string[] {
  const entries: Dirent[] = readdirSync(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/**
 * Checks the whole corpus before Astro renders it: every page has valid frontmatter, every table
 * is one GFM renders as written, and every internal link points at a page (and heading) that
 * exists. Returns all problems, not just the first, so a writer fixes them in one pass.
 */
export function checkContent(dir: string, publicDir: string = PUBLIC_DIR): ContentProblem[] {
  const problems: ContentProblem[] = [];
  const pages = new Map<string, ScannedPage>();
  // Paths read best relative to where the build runs, unless the corpus lives elsewhere (fixtures).
  const fromCwd = path.relative(process.cwd(), dir);
  const relativeDir = fromCwd === '' ? '.' : fromCwd.startsWith('..') && path.isAbsolute(dir) ? dir : fromCwd;

  for (const relative of listMarkdownFiles(dir)) {
    const file = path.join(relativeDir, relative);
    const source = readFileSync(path.join(dir, relative), 'utf8');
    const { frontmatter, body } = splitFrontmatter(source);
    problems.push(...checkFrontmatter(file, frontmatter));
    const tree = parseMarkdown(body);
    // Body lines are counted after the frontmatter; add its height so messages point at the file line.
    const offset = source.slice(0, source.indexOf(body)).split('\n').length - 1;
    const anchors = new Set(collectHeadings(tree).map((heading) => heading.id));
    const links = collectLinks(tree).map((link) => ({ ...link, line: link.line + offset }));
    for (const problem of [
      ...checkTables(tree, body),
      ...checkFences(tree, body, offset),
      ...checkImages(tree, publicDir),
    ]) {
      problems.push({ file, line: problem.line + offset, message: problem.message });
    }
    pages.set(relative.replace(/\.md$/, ''), { file, slug: relative.replace(/\.md$/, ''), anchors, links });
  }

  for (const page of pages.values()) {
    for (const link of page.links) {
      const message = checkLink(page, link.url, pages);
      if (message) problems.push({ file: page.file, line: link.line, message });
    }
  }
  return problems;
}

function checkFrontmatter(file: string, raw: string | null): ContentProblem[] {
  if (raw === null) {
    return [
      { file, line: 1, message: 'missing frontmatter (needs title, description, category, keywords, order)' },
    ];
  }
  let data: unknown;
  try {
    data = parseYaml(raw);
  } catch (error) {
    // The yaml library appends a code frame after the first line; the report keeps one line per problem.
    const reason = (error as Error).message.split('\n')[0];
    return [{ file, line: 1, message: `frontmatter is not valid YAML: ${reason}` }];
  }
  const parsed = PageFrontmatterSchema.safeParse(data ?? {});
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => {
    const field = issue.path.join('.') || 'frontmatter';
    const hint = field === 'category' ? ` (one of: ${CATEGORIES.join(', ')})` : '';
    return { file, line: 1, message: `frontmatter "${field}": ${issue.message}${hint}` };
  });
}

/** A line that starts like a table row: a pipe, then at least one more (markers of quotes aside). */
const TABLE_ROW_LIKE = /^[\s>]*\|.*\|/;

/**
 * Tables GFM would not render as written. A row whose cell count differs from the header's is
 * padded or cut silently; rows GFM does not see as a table at all (no delimiter row, a delimiter
 * row with another number of cells, a blank line or text between rows) end up as a paragraph of
 * pipes. Both render, so neither would fail the build without this check.
 */
function checkTables(tree: Nodes, body: string): { line: number; message: string }[] {
  const problems: { line: number; message: string }[] = [];
  const walk = (node: Nodes): void => {
    if (node.type === 'table') {
      const [header, ...rows] = node.children;
      const columns = header?.children.length ?? 0;
      for (const row of rows) {
        if (row.children.length !== columns) {
          problems.push({
            line: row.position?.start.line ?? 0,
            message: `table row has ${row.children.length} cells but the header has ${columns} (escape a | inside a cell as \\|)`,
          });
        }
      }
      return;
    }
    if (node.type === 'paragraph' && node.position) {
      const lines = body.slice(node.position.start.offset, node.position.end.offset).split('\n');
      const at = lines.findIndex((line) => TABLE_ROW_LIKE.test(line));
      if (at >= 0) {
        problems.push({
          line: node.position.start.line + at,
          message:
            'line looks like a table row but is not part of a table: a table needs a header row, then a delimiter row (|---|) with as many cells, then its rows with no blank line or text between them',
        });
      }
      return;
    }
    if ('children' in node) for (const child of node.children as Nodes[]) walk(child);
  };
  walk(tree);
  return problems;
}

/** A fence line: up to three spaces, a run of three or more backticks or tildes, then the rest. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Fence lines inside a fenced code block that were meant to close it. A fence closes a block only
 * when nothing but spaces follows it, so a closing fence with a sentence after it (```` ``` More
 * text ````), or a fence that opens the next example (```` ```bash ````) while one is still open,
 * is taken as a line of code: the block runs on and swallows the paragraphs and examples after
 * it. CommonMark renders that without complaint, so only this check can stop the build. Fences of
 * the other character or shorter than the opener cannot close the block and are left alone: they
 * are how a page shows markdown that holds fences.
 */
function checkFences(tree: Nodes, body: string, offset: number): { line: number; message: string }[] {
  const problems: { line: number; message: string }[] = [];
  const walk = (node: Nodes): void => {
    if (node.type === 'code' && node.position) {
      const source = body.slice(node.position.start.offset, node.position.end.offset).split('\n');
      const opener = FENCE_LINE.exec(source[0]!.replace(/^[\s>]*?(?= {0,3}[`~]{3})/, ''));
      if (!opener) return; // an indented code block has no fences
      const fence = opener[1]!;
      for (const [i, line] of source.slice(1).entries()) {
        const match = FENCE_LINE.exec(line.replace(/^[\s>]*?(?= {0,3}[`~]{3})/, ''));
        if (!match || match[1]![0] !== fence[0] || match[1]!.length < fence.length) continue;
        const after = match[2]!.trim();
        if (after === '') continue; // the closing fence itself
        problems.push({
          line: node.position.start.line + 1 + i,
          message: `this fence has text after it ("${after.slice(0, 40)}"), so it does not close the code block opened at line ${node.position.start.line + offset}, which runs on over what follows: put the fence alone on its line and the text on the next`,
        });
        return;
      }
      return;
    }
    if ('children' in node) for (const child of node.children as Nodes[]) walk(child);
  };
  walk(tree);
  return problems;
}

/**
 * Images the site serves itself (a path from the root) must be files in its public directory:
 * a missing one renders as a broken picture and fails no other check.
 */
function checkImages(tree: Nodes, publicDir: string): { line: number; message: string }[] {
  const problems: { line: number; message: string }[] = [];
  const walk = (node: Nodes): void => {
    if (node.type === 'image' && node.url.startsWith('/') && !node.url.startsWith('//')) {
      const pathname = decodeURIComponent(new URL(node.url, 'http://site').pathname);
      if (!existsSync(path.join(publicDir, pathname))) {
        problems.push({
          line: node.position?.start.line ?? 0,
          message: `missing image "${node.url}": no file ${pathname} in the site's public directory`,
        });
      }
    }
    if ('children' in node) for (const child of node.children as Nodes[]) walk(child);
  };
  walk(tree);
  return problems;
}

function collectLinks(tree: Nodes): { url: string; line: number }[] {
  const links: { url: string; line: number }[] = [];
  const walk = (node: Nodes): void => {
    const line = node.position?.start.line ?? 0;
    if (node.type === 'link' || node.type === 'definition') links.push({ url: node.url, line });
    if (node.type === 'html') {
      for (const match of node.value.matchAll(/\shref\s*=\s*["']([^"']*)["']/gi)) {
        links.push({ url: match[1]!, line });
      }
    }
    if ('children' in node) for (const child of node.children as Nodes[]) walk(child);
  };
  walk(tree);
  return links;
}

/** Returns why a link is broken, or null when it resolves (external links are not checked). */
function checkLink(page: ScannedPage, url: string, pages: Map<string, ScannedPage>): string | null {
  if (url === '' || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) return null;
  const pageUrl = page.slug === 'index' ? 'http://site/' : `http://site/docs/${page.slug}`;
  const resolved = new URL(url, pageUrl);
  const anchor = decodeURIComponent(resolved.hash.slice(1));
  let pathname = decodeURIComponent(resolved.pathname);
  if (pathname.length > 1) pathname = pathname.replace(/\/+$/, '');

  let target: ScannedPage | undefined;
  if (pathname === '/' || pathname === '/index.md') {
    target = pages.get('index');
    if (!target)
      return anchor ? `broken link "${url}": the home page has no content/index.md to hold #${anchor}` : null;
  } else if (pathname.startsWith('/docs/')) {
    const slug = pathname.slice('/docs/'.length).replace(/\.md$/, '');
    target = slug === 'index' ? undefined : pages.get(slug);
    if (!target)
      return `broken link "${url}": no page /docs/${slug} (no file ${slug}.md in the content directory)`;
  } else if (
    GENERATED_PATHS.has(pathname) ||
    DYNAMIC_PATHS.has(pathname) ||
    DYNAMIC_PREFIXES.some((prefix) => pathname.startsWith(prefix))
  ) {
    return null;
  } else {
    return `broken link "${url}": ${pathname} is neither a docs page nor a file the site generates`;
  }

  if (anchor && !target.anchors.has(anchor)) {
    const where = target === page ? 'this page' : `/docs/${target.slug}`;
    return `broken link "${url}": ${where} has no heading with id "${anchor}"`;
  }
  return null;
}

/** Formats problems as one readable block, one `file:line: message` per line. */
export function formatProblems(problems: ContentProblem[]): string {
  const lines = problems.map((p) => `  ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`);
  return `The documentation content has ${problems.length} problem(s):\n${lines.join('\n')}`;
}
