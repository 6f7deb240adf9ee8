// @ts-check
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import { docsBuild } from './src/integrations/docs-build.ts';
import { contentDir, siteUrl } from './src/lib/content-dir.ts';
import { rehypeCodeBlocks } from './src/plugins/rehype-code-blocks.ts';
import { rehypeHeadingAnchors } from './src/plugins/rehype-heading-anchors.ts';

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
      themes: { light: 'github-light', dark: 'github-dark' },
      defaultColor: false,
      wrap: false,
    },
    rehypePlugins: [rehypeHeadingAnchors, rehypeCodeBlocks],
  },
  devToolbar: { enabled: false },
});
