import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { AstroRenderer } from '../server/http/astro-renderer.ts';
import { createSharePages } from '../server/shares/share-pages.ts';
import type { ShareService } from '../server/shares/share-service.ts';

const ID = 'run_0123456789abcdefghjkmnpqrs';

/** A share service holding one published run, and a renderer that counts what it renders. */
function fixtures() {
  const service: ShareService = {
    publish: () => Promise.reject(new Error('not used')),
    find: async (id) =>
      id === ID
        ? {
            id,
            created_at: '2026-11-22T05:00:00.000Z',
            bundle: {
              version: 1,
              workflow_id: 'wf_1',
              generated_at: '2026-11-22T05:00:00Z',
              totals: {},
              nodes: [],
              edges: [],
            } as never,
          }
        : undefined,
  };
  const rendered: string[] = [];
  const renderer: AstroRenderer = {
    async render(pathname) {
      rendered.push(pathname);
      return {
        status: 200,
        headers: {},
        body: Buffer.from(`<html><body>${pathname} ${'x'.repeat(2000)}</body></html>`),
      };
    },
  };
  return { service, renderer, rendered };
}

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function serve(pages: ReturnType<typeof createSharePages>): Promise<string> {
  server = createServer((req, res) => {
    pages.handle(req, res, new URL(req.url ?? '/', 'http://x').pathname).then(
      (found) => {
        if (!found) res.writeHead(404).end();
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('share permalink pages', () => {
  it('renders a share page once and serves repeats from memory', async () => {
    const { service, renderer, rendered } = fixtures();
    const base = await serve(createSharePages({ service, renderer, site: 'http://site' }));
    const first = await fetch(`${base}/s/${ID}`);
    const again = await fetch(`${base}/share/${ID}`);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(await first.text());
    expect(rendered).toEqual([`/s/${ID}`]);
  });

  it('renders again when the cache is turned off, and never caches an unknown id', async () => {
    const { service, renderer, rendered } = fixtures();
    const base = await serve(createSharePages({ service, renderer, site: 'http://site', cacheBytes: 0 }));
    await fetch(`${base}/s/${ID}`);
    await fetch(`${base}/s/${ID}`);
    expect((await fetch(`${base}/s/run_unknownunknownunknownunk`)).status).toBe(404);
    expect(rendered).toEqual([`/s/${ID}`, `/s/${ID}`]);
  });
});
