import type { APIRoute, GetStaticPaths } from 'astro';
import { markdownVariant } from '../../lib/markdown-source.ts';
import { type DocPage, docsPages } from '../../lib/site-pages.ts';

export const getStaticPaths = (async () => {
  const pages = await docsPages();
  return pages.map((page) => ({ params: { slug: page.slug }, props: { page } }));
}) satisfies GetStaticPaths;

/** `/docs/{slug}.md`: the page as markdown, for agents and the "copy page" button. */
export const GET: APIRoute<{ page: DocPage }> = ({ props }) =>
  new Response(markdownVariant(props.page), { headers: { 'Content-Type': 'text/markdown; charset=utf-8' } });
