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
    // generator and its schema validator (about 280 kB) only load with the playground.
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'vendor', test: (id) => id.includes('node_modules') && !PLAYGROUND_ONLY.test(id) },
            { name: 'playground-vendor', test: PLAYGROUND_ONLY },
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
