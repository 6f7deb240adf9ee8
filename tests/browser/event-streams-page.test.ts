/**
 * The browser side of content/concepts/event-streams.md, run as the page shows it (its shell
 * commands run in tests/control-plane/streams-and-webhooks-pages.test.ts):
 * - the page's `EventSource` snippet, pasted into real Chromium on a page of the control plane's
 *   origin with the API key in its query string (as the page's Authentication section says),
 *   logs each completed execution;
 * - a frame of the execution stream has the `id:` and fields the "Resuming" section shows, and
 *   `Last-Event-ID` or `?last_event_id=` resume right after it, the header winning over the query;
 * - a browser `WebSocket` on the memory stream, filtered with `?scope=&scope_id=&key=`, receives
 *   the frame the page shows, and nothing the filter leaves out.
 * Against a real control plane with an API key and the first-agent example running as
 * `hello-agent` (tests/support/hello-agent-server.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_TIMEOUT_MS, launchChromium } from '../support/chromium.ts';
import { fencedBlocks, IdMap, parseSse, shapeDifferences, sseDifferences } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { type HelloAgentServer, startHelloAgentServer } from '../support/hello-agent-server.ts';

const PAGE = 'content/concepts/event-streams.md';
const MARKDOWN = readFileSync(fileURLToPath(new URL(`../../${PAGE}`, import.meta.url)), 'utf8');
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const KEY = 'event-streams-page-key';

/** The page's block of `lang` in the section headed `heading`, the only one there. */
function blockUnder(heading: string, lang: string): string {
  const start = MARKDOWN.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`${PAGE} has no section "${heading}"`);
  const end = MARKDOWN.indexOf('\n## ', start + 1);
  const section = MARKDOWN.slice(start, end === -1 ? undefined : end);
  const blocks = fencedBlocks(section).filter((block) => block.lang === lang);
  if (blocks.length !== 1) throw new Error(`"${heading}" shows ${blocks.length} ${lang} blocks, not one`);
  return blocks[0]!.code;
}

let hello: HelloAgentServer;
let browser: Browser;
let page: Page;
const logged: string[] = [];

async function api(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${hello.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

const summarize = async (text: string): Promise<string> =>
  (await api('/api/v1/execute/hello-agent.summarize', { input: { text } })).execution_id;

/**
 * The execution stream's text as a client reads it, from the first byte until it holds `events`
 * events (or 10 s pass), with the given resume header or query.
 */
async function readExecutionStream(
  events: number,
  resume: { header?: string; query?: string } = {},
  whileOpen: () => Promise<void> = async () => {},
): Promise<string> {
  const url = new URL(`${hello.url}/api/ui/v1/executions/events`);
  if (resume.query) url.searchParams.set('last_event_id', resume.query);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  const response = await fetch(url, {
    signal: controller.signal,
    headers: { 'x-api-key': KEY, ...(resume.header ? { 'last-event-id': resume.header } : {}) },
  });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  let acted = false;
  try {
    while (parseSse(text).events.length < events) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
      // Once the server said it is connected, whatever happens next is on the stream.
      if (!acted && text.includes(': connected')) {
        acted = true;
        await whileOpen();
      }
    }
  } catch {
    // aborted after 10 s: the text so far is what the test judges
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return text;
}

beforeAll(async () => {
  hello = await startHelloAgentServer('event-streams-page', KEY);
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('console', (message) => logged.push(message.text()));
  page.on('pageerror', (error) => logged.push(`uncaught: ${error.message}`));
  // A page of the control plane's own origin, as the dashboard is: the API sends no CORS headers.
  await page.goto(`${hello.url}/api/v1/health`);
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await hello?.close();
});

describe(PAGE, () => {
  it("the EventSource snippet, in Chromium, logs each completed execution's id, status and duration", async () => {
    const snippet = blockUnder('Reading an SSE stream', 'js');
    const streamUrl = `${PAGE_CONTROL_PLANE}/api/ui/v1/executions/events`;
    expect(snippet).toContain(`'${streamUrl}'`);
    const localized = snippet.replace(streamUrl, `${hello.url}/api/ui/v1/executions/events?api_key=${KEY}`);
    await page.evaluate(`${localized}\nglobalThis.pageStream = stream;`);
    await page.waitForFunction(() => (globalThis as any).pageStream.readyState === EventSource.OPEN);

    const id = await summarize('The quarterly report, in one line.');
    const line = await eventually('the snippet logs the execution', async () =>
      logged.find((text) => text.startsWith(`${id} `)),
    );
    expect(line).toMatch(new RegExp(`^${id} succeeded \\d+$`));
    expect(logged.filter((text) => text.startsWith('uncaught'))).toEqual([]);
    await page.evaluate(() => (globalThis as any).pageStream.close());
  });

  it('a frame of the execution stream is the one "Resuming" shows, and both ways of resuming start right after it', async () => {
    let first = '';
    let second = '';
    const text = await readExecutionStream(4, {}, async () => {
      first = await summarize('First.');
      second = await summarize('Second.');
    });
    const frames = parseSse(text).events;
    expect(
      frames.map((frame) => `${frame.event} ${JSON.parse(frame.data).execution_id}`),
      text,
    ).toEqual([
      `execution.started ${first}`,
      `execution.completed ${first}`,
      `execution.started ${second}`,
      `execution.completed ${second}`,
    ]);
    const [firstStarted, , secondStarted] = frames;

    const shown = blockUnder('Resuming the execution stream', 'text');
    const started = `id: ${firstStarted!.id}\nevent: ${firstStarted!.event}\ndata: ${firstStarted!.data}\n\n`;
    expect(sseDifferences(started, shown, { measured: new Set(), ids: new IdMap() })).toEqual([]);

    const afterHeader = parseSse(await readExecutionStream(3, { header: firstStarted!.id })).events;
    expect(afterHeader.map((frame) => frame.id)).toEqual(frames.slice(1).map((frame) => frame.id));
    const afterQuery = parseSse(await readExecutionStream(3, { query: firstStarted!.id })).events;
    expect(afterQuery.map((frame) => frame.id)).toEqual(frames.slice(1).map((frame) => frame.id));
    // A reconnecting EventSource keeps its first URL and sends the newer id in the header.
    const both = parseSse(
      await readExecutionStream(1, { query: firstStarted!.id, header: secondStarted!.id }),
    );
    expect(both.events.map((frame) => frame.id)).toEqual([frames[3]!.id]);
  });

  it('a browser WebSocket on the memory stream, filtered as the page says, receives the frame the page shows', async () => {
    const shown = JSON.parse(blockUnder('Memory over WebSocket', 'json')) as Record<string, unknown>;
    const filter = new URLSearchParams({
      scope: String(shown.scope),
      scope_id: String(shown.scope_id),
      key: String(shown.key),
      api_key: KEY,
    });
    const socketUrl = `${hello.url.replace(/^http/, 'ws')}/api/v1/memory/events/ws?${filter}`;
    await page.evaluate(
      (url) =>
        new Promise<void>((opened, failed) => {
          const socket = new WebSocket(url);
          const frames: unknown[] = [];
          Object.assign(globalThis, { memoryFrames: frames });
          socket.addEventListener('message', (message) => frames.push(JSON.parse(message.data)));
          socket.addEventListener('open', () => opened());
          socket.addEventListener('error', () => failed(new Error(`the WebSocket to ${url} failed`)));
        }),
      socketUrl,
    );

    const { scope, scope_id } = shown;
    // Left out by the filter: another key of the same scope, and the same key in another session.
    await api('/api/v1/memory/set', { key: 'theme', data: 'dark', scope, scope_id });
    await api('/api/v1/memory/set', { key: shown.key, data: 'de', scope, scope_id: 'sess_8' });
    await api('/api/v1/memory/set', { key: shown.key, data: shown.data, scope, scope_id });

    const frames = await eventually('the WebSocket receives the change', async () => {
      const received = (await page.evaluate(() => (globalThis as any).memoryFrames)) as unknown[];
      return received.length > 0 ? received : undefined;
    });
    // Changes arrive in the order they were applied: anything the filter let through would be first.
    expect(frames).toHaveLength(1);
    expect(shapeDifferences(frames[0], shown, { measured: new Set(), ids: new IdMap() })).toEqual([]);
  });
});
