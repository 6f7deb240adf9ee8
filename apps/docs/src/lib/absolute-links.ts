import type { Nodes } from 'mdast';
import { parseMarkdown } from './markdown-tree.ts';

/**
 * A page's markdown with its site-relative links (`/docs/concepts/nodes`) and bare anchors
 * (`#verifying`) made absolute (`https://docs.example.com/docs/...`), for `/llms-full.txt`: once
 * every page is joined in one file, a bare anchor would point into whichever page a reader is
 * in, and a path means nothing to a client that has no base URL. Links are found by parsing
 * (so code blocks and inline code are left alone) and each destination is replaced where it is
 * written, so the rest of the text stays byte for byte as the page has it.
 */
export function withAbsoluteLinks(markdown: string, site: string, pagePath: string): string {
  const edits: Array<{ at: number; length: number; url: string }> = [];
  const walk = (node: Nodes): void => {
    if ((node.type === 'link' || node.type === 'definition' || node.type === 'image') && node.position) {
      const url = absoluteUrl(node.url, site, pagePath);
      const start = node.position.start.offset;
      const end = node.position.end.offset;
      if (url && start !== undefined && end !== undefined) {
        const written = markdown.slice(start, end);
        const opener = node.type === 'definition' ? ']:' : '](';
        const at = written.lastIndexOf(`${opener}${node.type === 'definition' ? ' ' : ''}${node.url}`);
        if (at !== -1) {
          const offset = at + opener.length + (node.type === 'definition' ? 1 : 0);
          edits.push({ at: start + offset, length: node.url.length, url });
        }
      }
    }
    if ('children' in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(parseMarkdown(markdown));
  let out = markdown;
  for (const edit of edits.sort((a, b) => b.at - a.at)) {
    out = out.slice(0, edit.at) + edit.url + out.slice(edit.at + edit.length);
  }
  return out;
}

function absoluteUrl(url: string, site: string, pagePath: string): string | null {
  if (url.startsWith('#')) return `${site}${pagePath}${url}`;
  if (url.startsWith('/') && !url.startsWith('//')) return `${site}${url}`;
  return null;
}
