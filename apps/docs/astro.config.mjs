// @ts-check
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import { docsBuild } from './src/integrations/docs-build.ts';
import { siteUrl } from './src/lib/content-dir.ts';
import { rehypeCodeBlocks } from './src/plugins/rehype-code-blocks.ts';
import { rehypeHeadingAnchors } from './src/plugins/rehype-heading-anchors.ts';

export default defineConfig({
  site: siteUrl(),
  output: 'static',
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
