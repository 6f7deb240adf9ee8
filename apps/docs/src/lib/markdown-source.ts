/** Frontmatter block at the very top of a file, as Astro's markdown loader recognises it. */
const FRONTMATTER = /^\uFEFF?---\r?\n([\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)/;

export interface SplitSource {
  /** The raw YAML between the fences, or null when the file has no frontmatter. */
  frontmatter: string | null;
  /** The markdown after the frontmatter, trimmed (the same body Astro's loader keeps). */
  body: string;
}

export function splitFrontmatter(source: string): SplitSource {
  const match = FRONTMATTER.exec(source);
  if (!match) return { frontmatter: null, body: source.trim() };
  return { frontmatter: match[1] ?? '', body: source.slice(match[0].length).trim() };
}

/** The `.md` variant of a page: title, description as a quote, then the body as written. */
export function markdownVariant(page: { title: string; description: string; body: string }): string {
  return `# ${page.title}\n\n> ${page.description}\n\n${page.body}\n`;
}
