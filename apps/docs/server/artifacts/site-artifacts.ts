import { z } from 'zod';

/** One page of the build-time search index (`/search-index.json`, see the docs-site contract). */
export const IndexedPageSchema = z.object({
  slug: z.string().min(1),
  path: z.string().startsWith('/docs/'),
  title: z.string(),
  description: z.string(),
  category: z.string(),
  keywords: z.array(z.string()),
  /** Groups of equivalent search words; missing in index files written before it existed. */
  synonyms: z.array(z.array(z.string())).default([]),
  order: z.number(),
  markdown_url: z.string(),
});
export type IndexedPage = z.infer<typeof IndexedPageSchema>;

/** One `##`/`###` section of a page, or the text before its first heading. */
export const PassageSchema = z.object({
  page: z.number().int().min(0),
  section: z.string(),
  anchor: z.string(),
  text: z.string(),
});
export type Passage = z.infer<typeof PassageSchema>;

export const SearchIndexFileSchema = z
  .object({
    version: z.literal(1),
    generated_at: z.string(),
    pages: z.array(IndexedPageSchema),
    passages: z.array(PassageSchema),
  })
  .superRefine((file, ctx) => {
    file.passages.forEach((passage, i) => {
      if (passage.page >= file.pages.length) {
        ctx.addIssue({ code: 'custom', path: ['passages', i, 'page'], message: 'points past the page list' });
      }
    });
  });
export type SearchIndexFile = z.infer<typeof SearchIndexFileSchema>;

/** One entry of the documentation manifest (`/docs-ai.json`). */
export const ManifestDocSchema = z.object({
  slug: z.string().min(1),
  url: z.string(),
  markdownUrl: z.string(),
  title: z.string(),
  description: z.string(),
  category: z.string(),
  keywords: z.array(z.string()),
});
export type ManifestDoc = z.infer<typeof ManifestDocSchema>;

export const ManifestFileSchema = z.object({
  contractVersion: z.string(),
  generated_at: z.string(),
  site: z.string(),
  docs: z.array(ManifestDocSchema),
});
export type ManifestFile = z.infer<typeof ManifestFileSchema>;

/** Parses a generated JSON artifact, with a short reason when it is not what the contract says. */
export function parseArtifact<T>(schema: z.ZodType<T>, text: string): T {
  const json: unknown = JSON.parse(text);
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`does not match the contract at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return result.data;
}
