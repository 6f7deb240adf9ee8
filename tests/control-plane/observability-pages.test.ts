/**
 * The observability pages show what runs. Each page's ```bash blocks are run in a real
 * shell, in page order, against a control-plane process of its own (a fresh database), and each
 * answer must have the shape of the ```json block the page shows after the command
 * (tests/support/page-commands.ts). The batch the concepts page shows is compared with a batch a
 * real collector received.
 *
 * Substituted: `http://127.0.0.1:8080`, the control plane's default address, becomes the server
 * under test, and the page's collector `https://collector.example.com/switchyard` becomes a real
 * collector on 127.0.0.1 (over plain http, on loopback: the server runs with
 * execution_queue.webhook_allow_http and webhook_allow_private_networks on, as local development
 * does). Nothing else is.
 *
 * Needs `curl` and `bash` on PATH.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { commandExamples, fencedBlocks, IdMap, shapeDifferences } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const PAGE_COLLECTOR = 'https://collector.example.com/switchyard';
/** The secret the pages configure. */
const PAGE_SECRET = 's3cret';

/** The pages, each with how many commands it shows (a new one must be runnable: raise it then). */
const PAGES = {
  'content/concepts/observability.md': 1,
  'content/api/observability.md': 6,
} as const;

/** Numbers that depend on how many events were forwarded by the time the page's command ran. */
const MEASURED = new Set(['forwarded_total', 'queue_depth']);

interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

/** A collector on 127.0.0.1 that takes every batch (204). */
async function startCollector(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    received.push({ headers: req.headers, raw, body });
    res.statusCode = 204;
    res.end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/switchyard`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'the observability pages use curl, which is not on PATH: install it (apt-get install curl)',
    );
  }
});

for (const [page, commands] of Object.entries(PAGES)) {
  describe(page, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let collector: Awaited<ReturnType<typeof startCollector>>;
    let workDir: string;
    const localize = (text: string) =>
      text.split(PAGE_CONTROL_PLANE).join(server.url).split(PAGE_COLLECTOR).join(collector.url);
    const runner = createPageRunner({ page, cwd: ROOT, localize, measured: MEASURED });
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    const examples = commandExamples(markdown);
    const ids = new IdMap();

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-observability-pages-'));
      database = await throwawayDatabase('sy_observability_pages');
      collector = await startCollector();
      server = await startControlPlaneProcess({
        dir: workDir,
        databaseUrl: database.url,
        env: {
          SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
          SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        },
      });
    });

    afterAll(async () => {
      await runner.stop();
      await server?.stop();
      await collector?.close();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      expect(examples.filter((e) => !e.shown).map(runner.where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      const problems = await runner.runAll(examples, ids);
      expect(problems, `control plane:\n${server.output()}`).toEqual([]);
    }, 120_000);

    if (page === 'content/concepts/observability.md') {
      it('shows the batch a collector really receives, signed with the secret', async () => {
        const shown = fencedBlocks(markdown).find(
          (block) => block.lang === 'json' && block.code.includes('"batch_id"'),
        );
        expect(shown, 'the page shows a batch').toBeDefined();
        const expected = JSON.parse(shown!.code);
        const change = expected.events[0].payload;
        // The first snapshot goes out when forwarding starts: let it go first, so the memory
        // change travels in a batch of its own, like the page's.
        await eventually(
          'the first snapshot',
          async () =>
            collector.received.find((r) => r.body?.events?.some((e: any) => e.event === 'system.snapshot')),
          () => server.output(),
          30_000,
        );
        const written = await fetch(`${server.url}/api/v1/memory/set`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: change.key, data: change.data }),
        });
        expect(written.status).toBe(200);
        const batch = await eventually(
          'a batch with the memory change',
          async () =>
            collector.received.find((r) => r.body?.events?.some((e: any) => e.payload?.key === change.key)),
          () => `received: ${JSON.stringify(collector.received.map((r) => r.body))}\n${server.output()}`,
          30_000,
        );
        expect(
          shapeDifferences(batch.body, expected, { measured: MEASURED, ids, rewrite: localize }),
        ).toEqual([]);
        expect(batch.headers['x-service-delivery-id']).toBe(batch.body.batch_id);
        expect(batch.headers['content-type']).toBe('application/json');
        expect(batch.headers.authorization).toBe('Bearer collector-token');
        const signature = `sha256=${createHmac('sha256', PAGE_SECRET).update(batch.raw).digest('hex')}`;
        expect(batch.headers['x-service-signature']).toBe(signature);
      }, 60_000);
    }
  });
}
