import { type CollectionEntry, getCollection } from 'astro:content';
import { CATEGORIES, type Category } from './page-schema.ts';

export type DocEntry = CollectionEntry<'docs'>;

/** A documentation page as every generated artifact describes it. */
export interface DocPage {
  slug: string;
  path: string;
  markdownPath: string;
  title: string;
  description: string;
  category: Category;
  keywords: string[];
  /** Groups of equivalent search words (front matter `synonyms`). */
  synonyms: string[][];
  /** Whether search indexes the page (front matter `search`). */
  searchable: boolean;
  order: number;
  body: string;
  entry: DocEntry;
}

export interface NavGroup {
  category: Category;
  pages: DocPage[];
}

export const HOME_ID = 'index';

function toPage(entry: DocEntry): DocPage {
  return {
    slug: entry.id,
    path: `/docs/${entry.id}`,
    markdownPath: `/docs/${entry.id}.md`,
    title: entry.data.title,
    description: entry.data.description,
    category: entry.data.category,
    keywords: entry.data.keywords,
    synonyms: entry.data.synonyms,
    searchable: entry.data.search,
    order: entry.data.order,
    body: entry.body ?? '',
    entry,
  };
}

let cached: Promise<DocPage[]> | undefined;

/** Every /docs page in reading order: category order, then `order`, then title. */
export function docsPages(): Promise<DocPage[]> {
  // Every page's layout asks for the list; a build reads the corpus once, the dev server on each request
  // so edits show up.
  if (import.meta.env.DEV) return loadDocsPages();
  cached ??= loadDocsPages();
  return cached;
}

async function loadDocsPages(): Promise<DocPage[]> {
  const entries = await getCollection('docs', (entry) => entry.id !== HOME_ID);
  return entries
    .map(toPage)
    .sort(
      (a, b) =>
        CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category) ||
        a.order - b.order ||
        a.title.localeCompare(b.title),
    );
}

/** content/index.md, when the corpus has one. */
export async function homeEntry(): Promise<DocEntry | undefined> {
  const entries = await getCollection('docs', (entry) => entry.id === HOME_ID);
  return entries[0];
}

/** Pages grouped for the sidebar, empty categories left out. */
export function navigation(pages: DocPage[]): NavGroup[] {
  return CATEGORIES.map((category) => ({
    category,
    pages: pages.filter((page) => page.category === category),
  })).filter((group) => group.pages.length > 0);
}
