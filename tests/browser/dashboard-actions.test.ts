/**
 * The dashboard pages that act: the playground (call a function sync or async from a form
 * generated from its input_schema, or from JSON), "Run again" on the execution page, and the
 * approvals page (a reviewer's decision resumes a paused agent). In Chromium, against the control
 * plane's build run as a process, with the docs' example agents (examples/first-agent,
 * examples/approval-agent) and an agent of the test's own whose function fails, all on
 * 127.0.0.1. Each page must fit 390 px, read in light and dark, pass axe-core without serious or
 * critical violations and log no console error (a CSP violation is one). Screenshots go to
 * tests/browser/.screenshots/ (actions-*).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_TIMEOUT_MS } from '../support/chromium.ts';
import {
  type DashboardSession,
  horizontalOverflow,
  SCREENSHOTS,
  seriousViolations,
  startDashboardSession,
} from '../support/dashboard-session.ts';
import { eventually } from '../support/eventually.ts';

const RUN = randomBytes(3).toString('hex');
const hello = `hello-${RUN}`;
const publisher = `publisher-${RUN}`;
const failing = `failing-${RUN}`;
const summarize = `${hello}.summarize`;

let session: DashboardSession;
let failingAgent: Server;
let heartbeat: NodeJS.Timeout;

/**
 * An agent whose reasoner `explode` answers 500 with an error the problem must carry. It
 * registers, heartbeats and reports ready as an SDK does.
 */
async function startFailingAgent(): Promise<void> {
  failingAgent = createServer((req, res) => {
    req.resume();
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && req.url === '/health') return send(200, { status: 'ok' });
    if (req.method === 'POST' && req.url === '/reasoners/explode')
      return send(500, { error: 'the model quota is exceeded' });
    return send(404, { error: 'unknown' });
  });
  await new Promise<void>((ready) => failingAgent.listen(0, '127.0.0.1', ready));
  const { port } = failingAgent.address() as { port: number };
  await session.api('POST', '/api/v1/nodes/register', {
    id: failing,
    version: '1.0.0',
    base_url: `http://127.0.0.1:${port}`,
    deployment_type: 'long_running',
    reasoners: [{ id: 'explode', input_schema: { type: 'object' }, tags: ['test'] }],
    skills: [],
  });
  const beat = () =>
    session.api('POST', `/api/v1/nodes/${failing}/heartbeat`, { status: 'ready', version: '1.0.0' });
  await beat();
  await session.api('POST', `/api/v1/nodes/${failing}/lifecycle/status`, { status: 'ready' });
  heartbeat = setInterval(() => void beat().catch(() => {}), 2_000);
}

beforeAll(async () => {
  session = await startDashboardSession({ databasePrefix: 'sy_dashboard_actions' });
  await session.startExample('first-agent/agent.mjs', hello);
  await session.startExample('approval-agent/agent.mjs', publisher);
  await startFailingAgent();
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  clearInterval(heartbeat);
  failingAgent?.closeAllConnections();
  await new Promise((done) => (failingAgent ? failingAgent.close(done) : done(undefined)));
  await session?.stop();
});

async function executionsOf(target: string): Promise<any[]> {
  const { executions } = await session.api('GET', `/api/v1/executions?target=${encodeURIComponent(target)}`);
  return executions;
}

/** Waits until the execution has ended, and answers its record. */
function finished(executionId: string): Promise<any> {
  return eventually(`execution ${executionId} ends`, async () => {
    const record = await session.api('GET', `/api/v1/executions/${executionId}`);
    return ['succeeded', 'failed', 'cancelled', 'timeout'].includes(record.status) ? record : undefined;
  });
}

/** The execution id of the outcome's execution link. */
async function outcomeExecutionId(page: Page): Promise<string> {
  const link = page.getByRole('region', { name: 'Outcome' }).getByRole('link', { name: /^exec_/ });
  await link.waitFor();
  return (await link.textContent()) ?? '';
}

/** Opens the playground on a function, its input form ready. */
async function openPlayground(route: string): Promise<Page> {
  const page = await session.open(session.ui(route));
  await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
  await page.locator('.live[data-state="live"]').waitFor();
  return page;
}

describe('node page without the connector', () => {
  it('shows the weights read-only and says the connector API is off, without asking for a token', async () => {
    const page = await session.open(session.ui(`nodes/${hello}`));
    await page
      .getByText('Weights are read-only here: the connector API is off on this deployment.', { exact: false })
      .waitFor();
    expect(await page.getByRole('textbox', { name: 'Connector token' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: /^Weight of version/ }).count()).toBe(0);
    await session.close(page);
  });
});

describe('playground', () => {
  it('calls a function from its generated form, by keyboard, waits for the result and links to the execution', async () => {
    const page = await session.open(session.ui('playground'));
    const picker = page.getByLabel('Function');
    await picker.getByRole('option', { name: `${summarize} (reasoner)` }).waitFor({ state: 'attached' });
    await picker.selectOption(summarize);
    await page.waitForURL(`**/ui/playground?target=${summarize}`);
    // The form has the schema's members; a keyboard fills it and Enter runs it.
    const text = page.locator('#input_text');
    await text.focus();
    await page.keyboard.type('One. Two. Three.');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('input_max_sentences');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline, 'the focused field is outlined').not.toBe('none');
    await page.keyboard.type('2');
    await page.keyboard.press('Enter');

    const outcome = page.getByRole('region', { name: 'Outcome' });
    await outcome.getByText('succeeded').waitFor();
    await outcome.getByText('"One. Two."').waitFor();
    const id = await outcomeExecutionId(page);
    const record = await session.api('GET', `/api/v1/executions/${id}`);
    expect(record).toMatchObject({ target: summarize, status: 'succeeded' });
    expect(record.result).toEqual({ summary: 'One. Two.', sentences: 3 });

    await outcome.getByRole('link', { name: id }).click();
    await page.waitForURL(`**/ui/executions/${id}`);
    await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
    await page.locator('section', { hasText: 'Input' }).getByText('"One. Two. Three."').first().waitFor();
    await session.close(page);
  });

  it('queues a call on the async lane and follows the execution until it succeeds', async () => {
    const before = (await executionsOf(`${hello}.skill:word_count`)).length;
    const page = await openPlayground(`playground?target=${hello}.skill:word_count`);
    await page.locator('#input_text').fill('three little words');
    await page.getByLabel('Queue it and follow the execution').check();
    await page.getByRole('button', { name: 'Run' }).click();
    const outcome = page.getByRole('region', { name: 'Outcome' });
    await outcome.getByText('Queued as execution').waitFor();
    const id = await outcomeExecutionId(page);
    // The page follows the execution's events: its status and result appear without a reload.
    await outcome.locator('.badge', { hasText: 'succeeded' }).waitFor();
    await outcome.getByRole('heading', { name: 'Result' }).waitFor();
    expect(await outcome.locator('.json').textContent()).toContain('words:3');
    const record = await finished(id);
    expect(record).toMatchObject({ target: `${hello}.skill:word_count`, status: 'succeeded' });
    expect(record.result).toEqual({ words: 3, characters: 18 });
    expect((await executionsOf(`${hello}.skill:word_count`)).length).toBe(before + 1);
    await session.close(page);
  });

  it('refuses an input its schema refuses in the browser, naming the field, without calling', async () => {
    const before = (await executionsOf(summarize)).length;
    const page = await openPlayground(`playground?target=${summarize}`);
    await page.locator('#input_max_sentences').fill('40');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByText('2 fields need a change before the call').waitFor();
    expect(await page.locator('#input_text__error').textContent()).toBe('is required');
    expect(await page.locator('#input_max_sentences__error').textContent()).toMatch(/40.*10/);
    // The first refused field takes the focus.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('input_text');
    expect((await executionsOf(summarize)).length).toBe(before);
    await session.close(page);
  });

  it("shows the server's refusal of a JSON input field by field", async () => {
    const page = await openPlayground(`playground?target=${summarize}`);
    await page.getByRole('button', { name: 'JSON' }).click();
    await page.getByLabel('Input (a JSON object)').fill('{"text": 5, "max_sentences": 0}');
    await page.getByRole('button', { name: 'Run' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(
      `The call to ${summarize} was refused: Invalid request (400)`,
    );
    const fields = page.getByRole('list', { name: 'Fields the server refused' });
    await fields.getByText('input.text').waitFor();
    expect(await fields.textContent()).toContain('input.max_sentences');
    // Fixed in part and sent again; then, in the form, the refusals stand beside their fields.
    await page.getByLabel('Input (a JSON object)').fill('{"text": "", "max_sentences": 11}');
    await page.getByRole('button', { name: 'Run' }).click();
    await fields.getByText('must NOT have fewer than 1 characters').waitFor();
    await page.getByRole('button', { name: 'Form' }).click();
    expect(await page.locator('#input_max_sentences').inputValue()).toBe('11');
    expect(await page.locator('#input_max_sentences__error').textContent()).toBe('must be <= 10');
    const seen = session.takeProblems(page);
    expect(seen.length).toBe(2);
    expect(seen.every((line) => line.includes('400'))).toBe(true);
    await session.close(page);
  });

  it('shows a failed call readably, with the execution it was recorded on', async () => {
    const page = await openPlayground(`playground?target=${failing}.explode`);
    // Its schema names no members: the input is written as JSON.
    await page.getByText('names no members to lay out as a form').waitFor();
    await page.getByLabel('Input (a JSON object)').fill('{"prompt": "go"}');
    await page.getByRole('button', { name: 'Run' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).toContain(`The execution of ${failing}.explode failed`);
    expect(text).toContain('(502)');
    expect(text, 'no raw JSON').not.toMatch(/"\w+":/);
    const outcome = page.getByRole('region', { name: 'Outcome' });
    await outcome.getByText('Recorded as execution').waitFor();
    await outcome.getByText('the model quota is exceeded').first().waitFor();
    const id = await outcomeExecutionId(page);
    expect(await session.api('GET', `/api/v1/executions/${id}`)).toMatchObject({
      status: 'failed',
      target: `${failing}.explode`,
    });
    await outcome.getByRole('link', { name: id }).click();
    await page.waitForURL(`**/ui/executions/${id}`);
    await page.locator('.page-head .badge', { hasText: 'failed' }).waitFor();
    // The 502 of the call is the console's one expected error line.
    const seen = session.takeProblems(page);
    expect(seen.length).toBe(1);
    expect(seen[0]).toContain('502');
    await session.close(page);
  });
});

describe('run again', () => {
  it("opens the playground with the execution's target and input, and runs it as a new execution", async () => {
    const input = { text: 'Again. And again. Once more.', max_sentences: 2 };
    const first = await session.api('POST', `/api/v1/execute/${summarize}`, { input });
    const page = await session.open(session.ui(`executions/${first.execution_id}`));
    await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
    await page.getByText('"Again. And again. Once more."').waitFor();
    await page.getByRole('link', { name: 'Run again' }).click();
    await page.waitForURL(/\/ui\/playground\?target=/);
    const url = new URL(page.url());
    expect(url.searchParams.get('target')).toBe(summarize);
    expect(JSON.parse(url.searchParams.get('input') ?? 'null')).toEqual(input);
    await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
    expect(await page.locator('#input_text').inputValue()).toBe(input.text);
    expect(await page.locator('#input_max_sentences').inputValue()).toBe('2');
    await page.getByRole('button', { name: 'Run' }).click();
    const outcome = page.getByRole('region', { name: 'Outcome' });
    await outcome.getByText('succeeded').waitFor();
    const id = await outcomeExecutionId(page);
    expect(id).not.toBe(first.execution_id);
    const again = await session.api('GET', `/api/ui/v1/executions/${id}/input`);
    expect(again).toEqual({ execution_id: id, target: summarize, input });
    await session.close(page);
  });

  /** Records a call the agent ran itself, as its SDK reports one, with the input it was given. */
  async function reportedLocalCall(input: unknown): Promise<string> {
    const executionId = randomUUID();
    await session.api('POST', '/api/v1/workflow/executions/events', {
      execution_id: executionId,
      run_id: `run-${executionId}`,
      reasoner_id: 'summarize',
      agent_node_id: hello,
      status: 'succeeded',
      input_data: input,
      result: { summary: '', sentences: 0 },
      duration_ms: 5,
    });
    return executionId;
  }

  const notObjects: { name: string; input: unknown }[] = [
    { name: 'array', input: [1, 'two', { three: 3 }] },
    { name: 'string', input: 'just a sentence, not an object' },
  ];
  for (const { name, input } of notObjects) {
    it(`shows a reported call's ${name} input as its JSON text in the playground, and says why it cannot run`, async () => {
      const json = JSON.stringify(input);
      const firstId = await reportedLocalCall(input);
      expect((await session.api('GET', `/api/ui/v1/executions/${firstId}/input`)).input).toEqual(input);
      const page = await session.open(session.ui(`executions/${firstId}`));
      await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
      await page.getByRole('link', { name: 'Run again' }).click();
      await page.waitForURL(/\/ui\/playground\?target=/);
      expect(new URL(page.url()).searchParams.get('target')).toBe(summarize);
      await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
      // Not an object, so no form: the JSON editor holds the original input's text as it was.
      const editor = page.getByLabel('Input (a JSON object)');
      expect(await editor.inputValue()).toBe(json);
      expect(await page.getByLabel('Function').inputValue()).toBe(summarize);
      expect(await page.getByRole('button', { name: 'JSON' }).getAttribute('aria-pressed')).toBe('true');

      // The call API takes an object only: the editor says so beside the input and sends nothing.
      const before = (await executionsOf(summarize)).length;
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByText('The input must be a JSON object, such as {"text": "Hello"}.').waitFor();
      expect(await editor.getAttribute('aria-invalid')).toBe('true');
      expect(await editor.inputValue()).toBe(json);
      expect((await executionsOf(summarize)).length).toBe(before);

      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 860 });
        expect(await horizontalOverflow(page), `the playground at ${width} px scrolls sideways`).toBe(0);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({
          path: path.join(SCREENSHOTS, `actions-run-again-${name}-${width}.png`),
          fullPage: true,
        });
      }

      // Written as an object, it runs, and the new execution holds what was written.
      const wrapped = { text: 'Wrapped. Now an object.', max_sentences: 1 };
      await editor.fill(JSON.stringify(wrapped));
      await page.getByRole('button', { name: 'Run' }).click();
      const outcome = page.getByRole('region', { name: 'Outcome' });
      await outcome.getByText('succeeded').waitFor();
      const id = await outcomeExecutionId(page);
      expect(await session.api('GET', `/api/ui/v1/executions/${id}/input`)).toEqual({
        execution_id: id,
        target: summarize,
        input: wrapped,
      });
      await session.close(page);
    });
  }
});

describe('approvals', () => {
  /** Starts publish_post, which pauses for approval; answers the execution and its request id. */
  async function pausedPost(postId: string): Promise<{ executionId: string; approvalId: string }> {
    const { execution_id: executionId } = await session.api(
      'POST',
      `/api/v1/execute/async/${publisher}.publish_post`,
      { input: { post_id: postId, title: `Post ${postId}` } },
    );
    return { executionId, approvalId: `post-${postId}-${executionId}` };
  }

  it('shows a request as the agent pauses, and an approval given in the page resumes the agent', async () => {
    const page = await session.open(session.ui('approvals'));
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    await page.locator('.live[data-state="live"]').waitFor();
    const { executionId, approvalId } = await pausedPost('42');
    // The request appears without a reload, with its execution and times.
    const card = page.getByRole('article', { name: approvalId });
    await card.waitFor();
    expect(await card.getByRole('link', { name: executionId }).getAttribute('href')).toBe(
      `/ui/executions/${executionId}`,
    );
    expect(await card.locator('time').count()).toBe(2);
    expect(await card.textContent()).toMatch(/Expiresin 24 hours/);
    expect(await seriousViolations(page), 'axe violations with a pending request').toEqual([]);

    await card.getByLabel('Feedback to the agent (optional)').fill('Ship it.');
    await card.getByRole('button', { name: 'Approve' }).click();
    const note = page.getByRole('status').filter({ hasText: approvalId });
    await note.waitFor();
    expect(await note.textContent()).toContain(`Approved ${approvalId}`);
    // Decided, it leaves the pending list; the agent got the decision and finished the work.
    await card.waitFor({ state: 'detached' });
    const record = await finished(executionId);
    expect(record.status).toBe('succeeded');
    expect(record.result).toEqual({ post_id: '42', published: true, note: 'Ship it.' });
    const [request] = (await session.api('GET', `/api/v1/approvals?status=approved`)).approvals.filter(
      (a: any) => a.approval_request_id === approvalId,
    );
    expect(request).toMatchObject({ status: 'approved', feedback: 'Ship it.' });
    await session.close(page);
  });

  it('sends a request back with the changes asked for, and rejects another', async () => {
    const changes = await pausedPost('43');
    const rejected = await pausedPost('44');
    const page = await session.open(session.ui('approvals'));
    const changesCard = page.getByRole('article', { name: changes.approvalId });
    await changesCard.getByLabel('Feedback to the agent (optional)').fill('Shorter title, please.');
    await changesCard.getByRole('button', { name: 'Request changes' }).click();
    await changesCard.waitFor({ state: 'detached' });
    const rejectCard = page.getByRole('article', { name: rejected.approvalId });
    await rejectCard.getByLabel('Feedback to the agent (optional)').fill('Off topic.');
    await rejectCard.getByRole('button', { name: 'Reject' }).click();
    await rejectCard.waitFor({ state: 'detached' });

    expect((await finished(changes.executionId)).result).toEqual({
      post_id: '43',
      published: false,
      changes_requested: 'Shorter title, please.',
    });
    const failed = await finished(rejected.executionId);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe('rejected by the reviewer: Off topic.');
    // The decided ones are listed under their status.
    await page.getByLabel('Status').selectOption('rejected');
    await page.getByRole('article', { name: rejected.approvalId }).getByText('Off topic.').waitFor();
    await session.close(page);
  });
});

describe('a control plane that takes only signed decisions', () => {
  let signed: DashboardSession;
  const signedPublisher = `signed-${RUN}`;

  beforeAll(async () => {
    signed = await startDashboardSession({
      databasePrefix: 'sy_dashboard_signed',
      env: { SERVICE_APPROVAL_WEBHOOK_SECRET: `secret-${RUN}` },
    });
    await signed.startExample('approval-agent/agent.mjs', signedPublisher);
  }, 120_000);

  afterAll(async () => {
    await signed?.stop();
  });

  it('says an unsigned decision was refused and why, without asking for an API key', async () => {
    const { execution_id: executionId } = await signed.api(
      'POST',
      `/api/v1/execute/async/${signedPublisher}.publish_post`,
      { input: { post_id: '7', title: 'Signed only' } },
    );
    const page = await signed.open(signed.ui('approvals'));
    const card = page.getByRole('article', { name: `post-7-${executionId}` });
    await card.getByRole('button', { name: 'Approve' }).click();
    const alert = card.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('The decision was not recorded: Unauthorized (401)');
    await card.getByText('takes only signed decisions').waitFor();
    expect(await page.getByRole('dialog', { name: 'API key required' }).isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Enter API key' }).count()).toBe(0);
    // Nothing was decided: the execution still waits.
    expect((await signed.api('GET', `/api/v1/executions/${executionId}`)).status).toBe('waiting');
    const seen = signed.takeProblems(page);
    expect(seen.length).toBe(1);
    expect(seen[0]).toContain('401');
    await signed.close(page);
  });
});

describe('each page at 1280 and 390 px, light and dark', () => {
  let executionId: string;
  let pendingApproval: string;

  beforeAll(async () => {
    ({ execution_id: executionId } = await session.api('POST', `/api/v1/execute/${summarize}`, {
      input: { text: 'Screens. Of every page.', max_sentences: 1 },
    }));
    const { execution_id: paused } = await session.api(
      'POST',
      `/api/v1/execute/async/${publisher}.publish_post`,
      {
        input: { post_id: 'screens', title: 'A post for the screenshots' },
      },
    );
    pendingApproval = `post-screens-${paused}`;
  });

  const pages = [
    {
      name: 'playground',
      route: () => `playground?target=${summarize}&input=${encodeURIComponent('{"text":"Hello there."}')}`,
      // The page with a result: run it.
      ready: async (page: Page) => {
        await page.getByRole('button', { name: 'Run' }).click();
        await page
          .getByRole('region', { name: 'Outcome' })
          .getByRole('heading', { name: 'Result' })
          .waitFor();
      },
    },
    {
      name: 'playground-failed',
      route: () => `playground?target=${failing}.explode`,
      // The page with a failed call's problem: its 502 is the one console error expected.
      ready: async (page: Page) => {
        await page.getByRole('button', { name: 'Run' }).click();
        await page.getByRole('region', { name: 'Outcome' }).getByText('Recorded as execution').waitFor();
        const seen = session.takeProblems(page);
        expect(seen.length === 1 && seen[0]?.includes('502'), seen.join('\n')).toBe(true);
      },
    },
    {
      name: 'approvals',
      route: () => 'approvals',
      ready: async (page: Page) => {
        await page.getByRole('article', { name: pendingApproval }).waitFor();
      },
    },
    {
      name: 'execution-input',
      route: () => `executions/${executionId}`,
      ready: async (page: Page) => {
        await page.getByRole('heading', { name: 'Input', exact: true }).waitFor();
        await page.getByRole('link', { name: 'Run again' }).waitFor();
      },
    },
  ];

  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      it(`${scheme} at ${width} px: no horizontal scroll, no serious or critical axe violation`, async () => {
        const page = await session.open(session.ui('approvals'), {
          viewport: { width, height: 860 },
          colorScheme: scheme,
        });
        for (const entry of pages) {
          await page.goto(session.ui(entry.route()));
          await entry.ready(page);
          await page.locator('.live[data-state="live"]').waitFor();
          expect(await horizontalOverflow(page), `${entry.name} scrolls sideways`).toBe(0);
          expect(await seriousViolations(page), `${entry.name}: axe violations`).toEqual([]);
          const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
          expect(background === 'rgb(15, 18, 23)', `${entry.name} is ${scheme}`).toBe(scheme === 'dark');
          await page.screenshot({
            path: path.join(SCREENSHOTS, `actions-${entry.name}-${width}-${scheme}.png`),
            fullPage: true,
          });
        }
        // Keyboard: the first Tab lands on the skip link, which is visibly outlined.
        await page.keyboard.press('Tab');
        const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
        expect(outline).not.toBe('none');
        await session.close(page);
      });
    }
  }
});
