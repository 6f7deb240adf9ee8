import type { Element, Root } from 'hast';
import { SKIP, visit } from 'unist-util-visit';

/**
 * Wraps each highlighted code block in a frame with its language and a copy button, at build time
 * so the page does not shift when scripts run. The button is excluded from the search index.
 */
export function rehypeCodeBlocks() {
  return (tree: Root) => {
    visit(tree, 'element', (node: Element, index, parent) => {
      if (node.tagName !== 'pre' || !parent || index === undefined) return;
      if (parent.type === 'element' && parent.properties.className?.toString().includes('code-block')) return;
      const language = typeof node.properties.dataLanguage === 'string' ? node.properties.dataLanguage : '';
      const label = language && language !== 'plaintext' && language !== 'text' ? language : '';
      const frame: Element = {
        type: 'element',
        tagName: 'div',
        properties: { className: ['code-block'] },
        children: [
          {
            type: 'element',
            tagName: 'div',
            properties: { className: ['code-block-bar'], dataPagefindIgnore: 'all' },
            children: [
              {
                type: 'element',
                tagName: 'span',
                properties: { className: ['code-block-lang'] },
                children: label ? [{ type: 'text', value: label }] : [],
              },
              {
                type: 'element',
                tagName: 'button',
                properties: { type: 'button', className: ['copy-code'], ariaLabel: 'Copy code to clipboard' },
                children: [{ type: 'text', value: 'Copy' }],
              },
            ],
          },
          node,
        ],
      };
      parent.children[index] = frame;
      return SKIP;
    });
  };
}
