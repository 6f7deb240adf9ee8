import { z } from 'astro/zod';

import { CATEGORIES } from '../../contract/site-contract.ts';

export { CATEGORIES, type Category } from '../../contract/site-contract.ts';

/** The frontmatter every page of content/ must carry; the build fails on anything else. */
export const PageFrontmatterSchema = z.object({
  title: z.string().trim().min(1),
  description: z.string().trim().min(1),
  category: z.enum(CATEGORIES),
  keywords: z.array(z.string().trim().min(1)).min(1),
  order: z.number().int(),
  /**
   * Words and phrases that mean the same to a reader, one group per list
   * (`[[hitl, human in the loop]]`): a search naming one of a group also looks for the others,
   * on every page. Declared on the page where a writer noticed the need.
   */
  synonyms: z.array(z.array(z.string().trim().min(1)).min(2)).default([]),
  /**
   * Whether search (the site API's and Pagefind's) indexes the page; true by default. The
   * generated API reference says `false`: it restates, operation by operation, what the API
   * pages explain, and ninety tables of the same words would both crowd those pages out of the
   * results and skew how rare every word looks. It stays in the navigation and the llms files.
   */
  search: z.boolean().default(true),
});

export type PageFrontmatter = z.infer<typeof PageFrontmatterSchema>;
