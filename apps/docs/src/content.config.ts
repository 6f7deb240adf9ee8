import { defineCollection } from 'astro:content';
import { glob } from 'astro/loaders';
import { contentDir } from './lib/content-dir.ts';
import { PageFrontmatterSchema } from './lib/page-schema.ts';

/** content/ (or DOCS_CONTENT_DIR): one entry per markdown file, id = path without `.md`. */
const docs = defineCollection({
  loader: glob({
    pattern: '**/*.md',
    base: contentDir(),
    generateId: ({ entry }) => entry.replace(/\.md$/, ''),
  }),
  schema: PageFrontmatterSchema,
});

export const collections = { docs };
