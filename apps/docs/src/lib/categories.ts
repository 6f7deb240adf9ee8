/**
 * The documentation categories, in the order readers meet them: the sidebar groups, the values
 * frontmatter `category` may take, and the topics API filter. Kept free of imports so both the
 * Astro build and the front server can use it.
 */
export const CATEGORIES = [
  'Getting started',
  'Concepts',
  'API reference',
  'Operations',
  'Reference',
] as const;

export type Category = (typeof CATEGORIES)[number];
