import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AstroIntegration } from 'astro';
import * as pagefind from 'pagefind';
import { checkContent, formatProblems } from '../lib/content-check.ts';
import { contentDir } from '../lib/content-dir.ts';

/**
 * Guards and finishes the docs build: refuses to build a corpus with bad frontmatter or broken
 * internal links (naming file and line), and indexes the finished pages with Pagefind for the
 * header search box.
 */
export function docsBuild(): AstroIntegration {
  return {
    name: 'switchyard-docs-build',
    hooks: {
      'astro:config:setup': ({ command, logger }) => {
        const dir = contentDir();
        const problems = checkContent(dir);
        if (problems.length === 0) return;
        const report = formatProblems(problems);
        // The dev server keeps running so writers see every page while they fix things.
        if (command !== 'build') {
          logger.warn(report);
          return;
        }
        logger.error(report);
        // Astro appends a misleading "browser APIs" hint to any error mentioning "document", so the
        // report goes through the logger and the thrown error stays short and stack-free.
        const error = new Error(`Content check failed with ${problems.length} problem(s), listed above.`);
        error.stack = error.message;
        throw error;
      },
      'astro:build:done': async ({ dir, logger }) => {
        const started = performance.now();
        const { index, errors } = await pagefind.createIndex({});
        if (!index) throw new Error(`Pagefind could not start: ${errors.join('; ')}`);
        const site = fileURLToPath(dir);
        const added = await index.addDirectory({ path: site });
        if (added.errors.length > 0) throw new Error(`Pagefind indexing failed: ${added.errors.join('; ')}`);
        const written = await index.writeFiles({ outputPath: path.join(site, 'pagefind') });
        if (written.errors.length > 0)
          throw new Error(`Pagefind could not write: ${written.errors.join('; ')}`);
        await pagefind.close();
        logger.info(
          `Pagefind indexed ${added.page_count} pages in ${Math.round(performance.now() - started)} ms`,
        );
      },
    },
  };
}
