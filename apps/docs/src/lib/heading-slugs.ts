import GithubSlugger from 'github-slugger';

/**
 * Returns a function giving each heading of one page its id, the way Astro's markdown does
 * (github-slugger, duplicates numbered, a trailing dash dropped). The link checker, the search
 * index and the rendered HTML all go through this so their anchors cannot drift apart.
 * Use one instance per page, visiting headings in document order.
 */
export function createHeadingSlugger(): (text: string) => string {
  const slugger = new GithubSlugger();
  return (text) => {
    const slug = slugger.slug(text);
    return slug.endsWith('-') ? slug.slice(0, -1) : slug;
  };
}
