import type { Element, ElementContent, Root, RootContent } from 'hast';
import { SKIP, visit } from 'unist-util-visit';

function text(value: string): ElementContent {
  return { type: 'text', value };
}

function stringProperty(node: Element, name: string): string {
  const value = node.properties[name];
  return typeof value === 'string' ? value : '';
}

/** The frame of one highlighted block: a bar with its title (or language) and a copy button. */
function frame(pre: Element): Element {
  const language = stringProperty(pre, 'dataLanguage');
  const title = stringProperty(pre, 'dataTitle');
  const label = language && language !== 'plaintext' && language !== 'text' ? language : '';
  const caption: Element = title
    ? {
        type: 'element',
        tagName: 'span',
        properties: { className: ['code-block-title'] },
        children: [text(title)],
      }
    : {
        type: 'element',
        tagName: 'span',
        properties: { className: ['code-block-lang'] },
        children: label ? [text(label)] : [],
      };
  return {
    type: 'element',
    tagName: 'div',
    properties: {
      className: title ? ['code-block', 'has-title'] : ['code-block'],
      dataTab: pre.properties.dataTab,
    },
    children: [
      {
        type: 'element',
        tagName: 'div',
        // The title is the file's name: it stays searchable; the language and the button do not.
        properties: { className: ['code-block-bar'], dataPagefindIgnore: title ? undefined : 'all' },
        children: [
          caption,
          {
            type: 'element',
            tagName: 'button',
            properties: {
              type: 'button',
              className: ['copy-code'],
              ariaLabel: 'Copy code to clipboard',
              dataPagefindIgnore: 'all',
            },
            children: [text('Copy')],
          },
        ],
      },
      pre,
    ],
  };
}

function isFrame(node: RootContent | ElementContent | undefined): node is Element {
  const className = node?.type === 'element' ? node.properties.className : undefined;
  return Array.isArray(className) && className.includes('code-block');
}

function isBlank(node: RootContent | ElementContent): boolean {
  return node.type === 'text' && node.value.trim() === '';
}

/**
 * One tab group of consecutive framed blocks that all carry a `tab` label, as the ARIA tabs
 * pattern has it: a tablist of buttons, each controlling one panel. The first panel shows until the
 * page's script restores the reader's choice; without scripts every panel shows (see site.css).
 */
function tabGroup(frames: Element[], group: number): Element {
  const id = (kind: string, i: number) => `code-tabs-${group}-${kind}-${i + 1}`;
  const tabs: Element[] = frames.map((block, i) => ({
    type: 'element',
    tagName: 'button',
    properties: {
      type: 'button',
      role: 'tab',
      id: id('tab', i),
      className: ['code-tab'],
      ariaControls: id('panel', i),
      ariaSelected: i === 0 ? 'true' : 'false',
      tabIndex: i === 0 ? 0 : -1,
      dataTab: String(block.properties.dataTab),
    },
    children: [text(String(block.properties.dataTab))],
  }));
  const panels: Element[] = frames.map((block, i) => ({
    type: 'element',
    tagName: 'div',
    properties: {
      role: 'tabpanel',
      id: id('panel', i),
      className: ['code-tab-panel'],
      ariaLabelledby: id('tab', i),
      dataTab: String(block.properties.dataTab),
      hidden: i > 0,
    },
    children: [block],
  }));
  return {
    type: 'element',
    tagName: 'div',
    properties: { className: ['code-tabs'] },
    children: [
      {
        type: 'element',
        tagName: 'div',
        properties: {
          role: 'tablist',
          className: ['code-tab-list'],
          ariaLabel: 'Code examples',
          dataPagefindIgnore: 'all',
        },
        children: tabs,
      },
      ...panels,
    ],
  };
}

/** Replaces each run of two or more consecutive tabbed frames among `children` by a tab group. */
function groupTabs(children: (RootContent | ElementContent)[], next: () => number): void {
  for (let start = 0; start < children.length; start += 1) {
    const first = children[start];
    if (!isFrame(first) || first.properties.dataTab === undefined) continue;
    const run: number[] = [start];
    let cursor = start + 1;
    while (cursor < children.length) {
      const node = children[cursor]!;
      if (isBlank(node)) {
        cursor += 1;
        continue;
      }
      if (!isFrame(node) || node.properties.dataTab === undefined) break;
      run.push(cursor);
      cursor += 1;
    }
    if (run.length < 2) continue;
    const last = run[run.length - 1]!;
    const group = tabGroup(
      run.map((i) => children[i] as Element),
      next(),
    );
    children.splice(start, last - start + 1, group);
  }
}

/**
 * Wraps each highlighted code block in a frame with its title (fence meta `title="…"`) or language
 * and a copy button, and groups consecutive blocks with a `tab="…"` label into tabs, at build time
 * so the page does not shift when scripts run. Buttons are excluded from the search index.
 */
export function rehypeCodeBlocks() {
  return (tree: Root) => {
    visit(tree, 'element', (node: Element, index, parent) => {
      if (node.tagName !== 'pre' || !parent || index === undefined) return;
      if (parent.type === 'element' && String(parent.properties.className).includes('code-block')) return;
      parent.children[index] = frame(node);
      return SKIP;
    });
    let groups = 0;
    const next = () => {
      groups += 1;
      return groups;
    };
    groupTabs(tree.children, next);
    visit(tree, 'element', (node: Element) => {
      groupTabs(node.children, next);
    });
  };
}
