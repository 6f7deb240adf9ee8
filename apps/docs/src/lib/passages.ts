import type { Nodes } from 'mdast';
import { createHeadingSlugger } from './heading-slugs.ts';
import { headingText, parseMarkdown, plainText } from './markdown-tree.ts';

export interface Passage {
  /** The heading text, or the page title for text before the first section. */
  section: string;
  /** The heading id in the HTML, or '' for text before the first section. */
  anchor: string;
  text: string;
}

/**
 * Splits a page into one passage per `##`/`###` section, the unit the site API ranks and links to
 * (every section, even one with no text before its first subheading).
 * Deeper headings stay inside their section; every heading still advances the slugger so anchors
 * match the ids of the rendered page.
 */
export function pagePassages(title: string, body: string): Passage[] {
  const tree = parseMarkdown(body);
  const slug = createHeadingSlugger();
  const passages: Passage[] = [];
  let current: Passage = { section: title, anchor: '', text: '' };
  let parts: string[] = [];
  /**
   * The section's code blocks, kept after its prose: their words stay searchable, and a snippet,
   * which takes the first window holding the most query words, is cut from the prose around them
   * when the prose has them, not from a curl command or a JSON answer.
   */
  let code: string[] = [];
  const flush = () => {
    // A heading followed directly by a subheading has no text of its own; it still gets a
    // passage, its heading as the text, so its words stay searchable and every rendered heading
    // is listed among the page's sections. Only an empty stretch before the first heading goes.
    const text = [...parts, ...code].join('\n\n').trim() || (current.anchor === '' ? '' : current.section);
    if (text !== '') passages.push({ ...current, text });
    parts = [];
    code = [];
  };
  const visit = (node: Nodes): void => {
    if (node.type === 'heading') {
      const text = headingText(node);
      const id = slug(text);
      if (node.depth === 2 || node.depth === 3) {
        flush();
        current = { section: text, anchor: id, text: '' };
      } else if (node.depth > 3) {
        parts.push(text);
      }
      return;
    }
    // Headings can sit inside block quotes or lists; walk containers so their ids are counted.
    if (node.type === 'blockquote' || node.type === 'list' || node.type === 'listItem') {
      const nestedHeading = (node.children as Nodes[]).some((child) => containsHeading(child));
      if (nestedHeading) {
        for (const child of node.children as Nodes[]) visit(child);
        return;
      }
    }
    const text = plainText(node).trim();
    if (text !== '') (node.type === 'code' ? code : parts).push(text);
  };
  for (const child of tree.children) visit(child);
  flush();
  return passages;
}

function containsHeading(node: Nodes): boolean {
  if (node.type === 'heading') return true;
  return 'children' in node && (node.children as Nodes[]).some(containsHeading);
}
