import type { Element, ElementContent, Root } from 'hast';
import { visit } from 'unist-util-visit';
import { createHeadingSlugger } from '../lib/heading-slugs.ts';

const HEADING = /^h([1-6])$/;

function textOf(node: ElementContent): string {
  if (node.type === 'text') return node.value;
  if (node.type === 'element') return node.children.map(textOf).join('');
  return '';
}

/**
 * Gives every heading its id (with the same slugger the search index and link checker use) and
 * appends a self-link for h2–h4. Astro's own id step runs after user plugins and keeps ids that are
 * already set, so the ids here are the ones rendered and reported in `headings`.
 */
export function rehypeHeadingAnchors() {
  return (tree: Root) => {
    const slug = createHeadingSlugger();
    visit(tree, 'element', (node: Element) => {
      const level = HEADING.exec(node.tagName)?.[1];
      if (!level) return;
      const text = node.children.map(textOf).join('');
      const id = typeof node.properties.id === 'string' ? node.properties.id : slug(text);
      node.properties.id = id;
      if (Number(level) < 2 || Number(level) > 4) return;
      // The link holds no text node, so the heading text Astro collects for the TOC stays clean.
      node.children.push({
        type: 'element',
        tagName: 'a',
        properties: { className: ['heading-anchor'], href: `#${id}`, ariaLabel: `Link to section: ${text}` },
        children: [],
      });
    });
  };
}
