import type { APIRoute } from 'astro';
import { SITE_NAME, SITE_SUMMARY } from '../lib/build-info.ts';
import { markdownVariant } from '../lib/markdown-source.ts';
import { docsPages, homeEntry, navigation } from '../lib/site-pages.ts';

/**
 * `/index.md`: the home page as markdown. Without a content/index.md the home page is generated,
 * so its markdown is too: the summary and the page list by category.
 */
export const GET: APIRoute = async () => {
  const home = await homeEntry();
  let markdown: string;
  if (home) {
    markdown = markdownVariant({
      title: home.data.title,
      description: home.data.description,
      body: home.body ?? '',
    });
  } else {
    const groups = navigation(await docsPages()).map(
      (group) =>
        `## ${group.category}\n\n${group.pages.map((page) => `- [${page.title}](${page.markdownPath}): ${page.description}`).join('\n')}`,
    );
    markdown = markdownVariant({ title: SITE_NAME, description: SITE_SUMMARY, body: groups.join('\n\n') });
  }
  return new Response(markdown, { headers: { 'Content-Type': 'text/markdown; charset=utf-8' } });
};
