// @ts-check
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import { docsBuild } from './src/integrations/docs-build.ts';
import { readableTheme } from './src/lib/code-themes.ts';
import { contentDir, siteUrl } from './src/lib/content-dir.ts';
import { rehypeCallouts } from './src/plugins/rehype-callouts.ts';
import { rehypeCodeBlocks } from './src/plugins/rehype-code-blocks.ts';
import { rehypeHeadingAnchors } from './src/plugins/rehype-heading-anchors.ts';
import { shikiCodeMeta } from './src/plugins/shiki-code-meta.ts';

// A build of another corpus (tests, the benchmark) keeps its content-layer cache apart, so it never
// races with or pollutes the cache of the real site's build.
const cacheDir = process.env.DOCS_CONTENT_DIR
  ? path.join(
      tmpdir(),
      'switchyard-docs-cache',
      createHash('sha256').update(contentDir()).digest('hex').slice(0, 12),
    )
  : undefined;

export default defineConfig({
  site: siteUrl(),
  output: 'static',
  ...(cacheDir ? { cacheDir } : {}),
  adapter: node({ mode: 'middleware' }),
  security: { checkOrigin: false },
  build: { format: 'directory' },
  trailingSlash: 'never',
  integrations: [docsBuild()],
  markdown: {
    // Straight quotes and dashes stay as written: readers copy identifiers and commands from prose.
    smartypants: false,
    shikiConfig: {
      // GitHub's themes with their faint colours (comments above all) strengthened to 4.5:1 on the
      // site's code backgrounds (--code-bg in site.css); every language Shiki bundles is loaded on use.
      themes: {
        light: await readableTheme('github-light', '#f6f7f9'),
        dark: await readableTheme('github-dark', '#16161e'),
      },
      defaultColor: false,
      wrap: false,
      transformers: [shikiCodeMeta()],
    },
    rehypePlugins: [rehypeCallouts, rehypeHeadingAnchors, rehypeCodeBlocks],
  },
  devToolbar: { enabled: false },
});
