import type { ShikiTransformer } from 'shiki';

/** `key="value"`, `key='value'` or `key=value` pairs of a fence's meta string. */
const PAIR = /([A-Za-z][\w-]*)=(?:"([^"]*)"|'([^']*)'|([^\s"']+))/g;

/** The key/value pairs of a code fence's meta (what follows the language in its info string). */
export function parseCodeMeta(meta: string | undefined): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const match of (meta ?? '').matchAll(PAIR)) {
    pairs.set(match[1]!, match[2] ?? match[3] ?? match[4] ?? '');
  }
  return pairs;
}

/**
 * Carries a fence's `title="…"` and `tab="…"` onto the highlighted `<pre>` as data attributes.
 * Shiki is the only step that still sees the meta string; the rehype step that frames code blocks
 * runs after it and reads these attributes.
 */
export function shikiCodeMeta(): ShikiTransformer {
  return {
    name: 'switchyard:code-meta',
    pre(node) {
      const meta = parseCodeMeta(this.options.meta?.__raw);
      const title = meta.get('title')?.trim();
      const tab = meta.get('tab')?.trim();
      if (title) node.properties.dataTitle = title;
      if (tab) node.properties.dataTab = tab;
    },
  };
}
