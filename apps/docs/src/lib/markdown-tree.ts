import type { Heading, Nodes, Root } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { createHeadingSlugger } from './heading-slugs.ts';

const parser = unified().use(remarkParse).use(remarkGfm);

/** Parses a page body with the same markdown dialect Astro renders (CommonMark + GFM). */
export function parseMarkdown(body: string): Root {
  return parser.runSync(parser.parse(body)) as Root;
}

/**
 * The text a heading's id is made from. Matches what Astro's rehype step sees: text and inline
 * code count, raw HTML and image alt text do not.
 */
export function headingText(heading: Heading): string {
  let text = '';
  const walk = (node: Nodes): void => {
    if (node.type === 'text' || node.type === 'inlineCode') text += node.value;
    else if ('children' in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(heading);
  return text;
}

export interface HeadingInfo {
  depth: number;
  text: string;
  id: string;
  line: number;
}

/** Every heading of a page in document order, with the id the rendered HTML gives it. */
export function collectHeadings(tree: Root): HeadingInfo[] {
  const slug = createHeadingSlugger();
  const headings: HeadingInfo[] = [];
  const walk = (node: Nodes): void => {
    if (node.type === 'heading') {
      const text = headingText(node);
      headings.push({ depth: node.depth, text, id: slug(text), line: node.position?.start.line ?? 0 });
      return;
    }
    if ('children' in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(tree);
  return headings;
}

const BLOCK_CONTAINERS = new Set(['root', 'blockquote', 'list', 'listItem', 'table', 'footnoteDefinition']);

/**
 * Plain text of a node: markdown syntax dropped, code kept verbatim, blocks separated by
 * newlines and table cells by spaces so words from neighbouring blocks never fuse together.
 */
export function plainText(node: Nodes): string {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
    case 'code':
      return node.value;
    case 'html':
      return node.value.replace(/<[^>]*>/g, ' ').trim();
    case 'break':
      return '\n';
    case 'image':
      return node.alt ?? '';
    case 'tableRow':
      return node.children.map(plainText).join(' ');
    case 'thematicBreak':
    case 'definition':
      return '';
    default:
      break;
  }
  if (!('children' in node)) return '';
  const separator = BLOCK_CONTAINERS.has(node.type) ? '\n' : '';
  const text = (node.children as Nodes[])
    .map(plainText)
    .filter((part) => part !== '')
    .join(separator);
  // A callout's `[!WARNING]` marker is syntax, like `>` itself: the site shows it as a label.
  return node.type === 'blockquote' ? text.replace(ALERT_MARKER, '') : text;
}

/** GitHub's alert marker opening a block quote (`> [!NOTE]`), with the line break after it. */
const ALERT_MARKER = /^\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*\n?/i;
