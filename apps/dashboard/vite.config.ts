import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { compression } from 'vite-plugin-compression2';

/**
 * The control plane serves the build at /ui/ under a strict Content-Security-Policy (scripts and
 * styles from 'self' only), so the build must not inline anything into index.html: CSS goes to
 * files and the module-preload polyfill, which Vite would inject inline, is left out (every
 * browser the dashboard supports preloads modules natively).
 *
 * Every file also gets gzip and brotli copies beside it (`x.js.gz`, `x.js.br`), which the control
 * plane sends to browsers that accept them: it compresses nothing on the fly.
 *
 * `npm run dev` proxies /api to a control plane: SWITCHYARD_URL, default http://127.0.0.1:8080.
 */
/** The playground's form generator (rjsf), its schema validator and what only they use. */
const PLAYGROUND_ONLY =
  /node_modules[\\/](@rjsf|@cfworker|@x0k|markdown-to-jsx|fast-equals|jsonpointer|react-is)[\\/]/;
/** The workflow page's graph (xyflow, its d3 and zustand) and ELK's API to its layout worker. */
const GRAPH_ONLY = /node_modules[\\/](@xyflow|d3-[a-z]+|zustand|classcat|elkjs)[\\/]/;
/**
 * Libraries only some pages use (long lists, JSON views) or the command palette (cmdk, its Radix
 * dialog and scroll lock): chunked with what uses them, loaded with it.
 */
const LATER_ONLY =
  /node_modules[\\/](@tanstack[\\/](react-virtual|virtual-core)|react-json-view-lite|cmdk|@radix-ui|react-remove-scroll(-bar)?|react-style-singleton|use-callback-ref|use-sidecar|aria-hidden|get-nonce|detect-node-es)[\\/]/;

export default defineConfig({
  base: '/ui/',
  plugins: [
    react(),
    compression({ algorithms: ['gzip', 'brotliCompress'], exclude: [/\.map$/], threshold: 1024 }),
  ],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: true,
    // Libraries change less often than the app: in a chunk of their own (hashed, cached for a
    // year by the control plane) they stay cached across dashboard releases. The playground's form
    // generator and its schema validator (about 280 kB) only load with the playground, the
    // workflow graph (xyflow and what it uses) only with a workflow page.
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            {
              name: 'vendor',
              test: (id) =>
                id.includes('node_modules') &&
                !PLAYGROUND_ONLY.test(id) &&
                !GRAPH_ONLY.test(id) &&
                !LATER_ONLY.test(id),
            },
            { name: 'playground-vendor', test: PLAYGROUND_ONLY },
            { name: 'graph-vendor', test: GRAPH_ONLY },
          ],
        },
      },
    },
  },
  server: {
    proxy: { '/api': { target: process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8080', changeOrigin: false } },
  },
  preview: {
    proxy: { '/api': { target: process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8080', changeOrigin: false } },
  },
});
