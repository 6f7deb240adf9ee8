/**
 * `switchyard share`, the build run as a child process: a real control plane (PGlite, or
 * PostgreSQL when DATABASE_URL is set) with the first example agent, and the docs site's front
 * server (the docs build) in this process. The permalink the CLI prints must serve a page that
 * draws the run. Every command of content/reference/cli-share.md runs as the page shows. Needs
 * the docs build (`npm run build -w @switchyard/docs`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, startCliSession } from '../support/cli.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
let docs: TestDocsServer;

beforeAll(async () => {
  docs = await startTestDocsServer();
  session = await startCliSession({ databasePrefix: 'sy_cli_share' });
  await session.startExample('first-agent/agent.mjs', 'hello-agent');
  const run = await session.cli([
    'call',
    'hello-agent.summarize',
    'text=Points move. Trains wait.',
    '--workflow',
    'wf-cli-share',
  ]);
  expect(run.code, run.stderr).toBe(0);
});

afterAll(async () => {
  await session?.stop();
  await docs?.close();
  expect(docs?.errors).toEqual([]);
});

describe('switchyard share', () => {
  it('publishes to --docs-url and prints a permalink whose page draws the run, redacted', async () => {
    const { code, stdout, stderr } = await session.cli([
      'share',
      'wf-cli-share',
      '--title',
      'Signal run',
      '--docs-url',
      docs.url,
    ]);
    expect(code, stderr).toBe(0);
    const url = stdout.trim();
    expect(url).toMatch(new RegExp(`^${docs.url}/s/run_[0-9a-z]{26}$`));
    const page = await fetch(url, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Signal run');
    const graph = /<svg[^>]*class="run-graph-svg"[\s\S]*?<\/svg>/.exec(html)?.[0];
    expect(graph, 'the page draws the run as an SVG graph').toBeDefined();
    expect(graph!.match(/class="run-graph-node /g)).toHaveLength(1);
    expect(graph).toContain('summarize');
    expect(html).not.toContain('Points move');
    expect(html).toContain('[redacted]');
  });

  it('--no-redact publishes inputs and outputs; --json prints id and url', async () => {
    const { stdout } = await session.cli(['share', 'wf-cli-share', '--no-redact', '--json'], {
      env: { SWITCHYARD_DOCS_URL: docs.url },
    });
    const published = JSON.parse(stdout);
    expect(published.url).toBe(`${docs.url}/s/${published.id}`);
    const stored = await (await fetch(published.url, { headers: { Accept: 'application/json' } })).json();
    expect(stored).toMatchObject({ workflow_id: 'wf-cli-share' });
    expect(JSON.stringify(stored)).toContain('Points move');
  });

  it('without a docs site of its own, lets the control plane publish to the one it is configured with', async () => {
    const withDocs = await startCliSession({
      databasePrefix: 'sy_cli_share_cp',
      env: { SWITCHYARD_DOCS_URL: docs.url },
    });
    try {
      await withDocs.startExample('first-agent/agent.mjs', 'hello-agent');
      await withDocs.cli([
        'call',
        'hello-agent.summarize',
        'text=Points move.',
        '--workflow',
        'wf-cli-share-cp',
      ]);
      const { code, stdout, stderr } = await withDocs.cli([
        'share',
        'wf-cli-share-cp',
        '--title',
        'Via the control plane',
      ]);
      expect(code, stderr).toBe(0);
      const url = stdout.trim();
      expect(url).toMatch(new RegExp(`^${docs.url}/s/run_[0-9a-z]{26}$`));
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Via the control plane');
    } finally {
      await withDocs.stop();
    }
  });

  it('without a docs site anywhere, says where to name one: exit 1', async () => {
    const { code, stderr } = await session.cli(['share', 'wf-cli-share']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: Nowhere to publish');
    expect(stderr).toContain('fix: Pass --docs-url');
  });

  it('an unknown workflow, or a docs site that cannot be reached, exits 1 with what went wrong', async () => {
    const unknown = await session.cli(['share', 'wf-none', '--docs-url', docs.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error: Not found (404)');
    const down = await session.cli(['share', 'wf-cli-share', '--docs-url', 'http://127.0.0.1:65534']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('Could not reach http://127.0.0.1:65534/api/v1/shares');
  });
});

describe('content/reference/cli-share.md', () => {
  it('every command prints what the page shows', async () => {
    const results = await checkCliPage(
      'content/reference/cli-share.md',
      { ...session.env, SWITCHYARD_DOCS_URL: docs.url },
      1,
    );
    const permalink = results[0]!.result.stdout.trim();
    const page = await fetch(permalink);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Summary run');
  });
});
