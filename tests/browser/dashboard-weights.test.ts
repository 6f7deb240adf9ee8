/**
 * Traffic weights on a node's page, changed through the connector API with its own token. In
 * Chromium, against the control plane's build run as a process with the docs' example agent
 * running twice under one node id (versions 1.0.0 and 1.1.0), all on 127.0.0.1. One control plane
 * grants the connector token versions:write, another only reads. Screenshots go to
 * tests/browser/.screenshots/ (weights-*).
 */
import { randomBytes } from 'node:crypto';
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
import { keepForDocs } from '../support/docs-screenshots.ts';
import { eventually } from '../support/eventually.ts';

const RUN = randomBytes(3).toString('hex');
const canary = `canary-${RUN}`;
const TOKEN = `connector-${RUN}`;

/** The weight of each version, as the control plane's API answers it. */
async function weights(session: DashboardSession): Promise<Record<string, number>> {
  const node = await session.api('GET', `/api/v1/nodes/${canary}`);
  return Object.fromEntries(
    node.instances.map((instance: { version: string; traffic_weight: number }) => [
      instance.version,
      instance.traffic_weight,
    ]),
  );
}

/** The node page, its instances listed. */
async function openNodePage(session: DashboardSession, options = {}): Promise<Page> {
  const page = await session.open(session.ui(`nodes/${canary}`), options);
  await page.getByRole('table', { name: 'Instances' }).getByText('1.1.0').waitFor();
  return page;
}

/** Gives the page the connector token through its form, as a person does. */
async function giveToken(page: Page): Promise<void> {
  await page.getByRole('textbox', { name: 'Connector token' }).fill(TOKEN);
  await page.getByRole('button', { name: 'Use this token' }).click();
}

/** The instances table's weight cell of one version. */
function weightCell(page: Page, version: string) {
  return page
    .getByRole('table', { name: 'Instances' })
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: version, exact: true }) })
    .getByRole('cell')
    .nth(3);
}

describe('with a connector token that may write versions', () => {
  let session: DashboardSession;

  beforeAll(async () => {
    session = await startDashboardSession({
      databasePrefix: 'sy_dashboard_weights',
      env: { SERVICE_CONNECTOR_TOKEN: TOKEN },
    });
    await session.startExample('first-agent/agent.mjs', canary);
    await session.startExample('first-agent/agent.mjs', canary, { AGENT_VERSION: '1.1.0' });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await session?.stop();
  });

  it("shows each instance's heartbeat rhythm and when its lease ends", async () => {
    await eventually('both instances have heartbeated twice', async () => {
      const node = await session.api('GET', `/api/v1/nodes/${canary}`);
      return node.instances.every(
        (instance: { observed_heartbeat_interval_seconds: number | null }) =>
          instance.observed_heartbeat_interval_seconds !== null,
      )
        ? true
        : undefined;
    });
    const page = await openNodePage(session);
    const table = page.getByRole('table', { name: 'Instances' });
    for (const version of ['1.0.0', '1.1.0']) {
      const row = table
        .getByRole('row')
        .filter({ has: page.getByRole('cell', { name: version, exact: true }) });
      // The rhythm presence observes: it starts at the assumed interval and follows the agent's.
      await row.getByRole('cell', { name: /^\d+(\.\d)? s$/ }).waitFor();
      expect(await row.locator('time').last().textContent()).toMatch(/^in \d+ (second|minute)s?$/);
    }
    await session.close(page);
  });

  it('asks for the connector token, not the API key, and says so when it is refused', async () => {
    const page = await openNodePage(session);
    const form = page.getByRole('form', { name: 'Connector access' });
    await form.getByText('takes its own token (SERVICE_CONNECTOR_TOKEN), not the API key').waitFor();
    await form.getByRole('textbox', { name: 'Connector token' }).fill('not-the-token');
    await form.getByRole('button', { name: 'Use this token' }).click();
    await form.getByText('The connector refused that token.').waitFor();
    // The connector's 401 is about its token: the header does not ask for an API key. The
    // refused manifest request is the one console error expected.
    expect(await page.getByRole('button', { name: 'Enter API key' }).count()).toBe(0);
    const seen = session.takeProblems(page);
    expect(seen.length === 1 && seen[0]?.includes('401'), seen.join('\n')).toBe(true);
    expect(await page.getByRole('form', { name: /^Weight of version/ }).count()).toBe(0);
    await session.close(page);
  });

  it("sets a version's weight, which the table shows and new executions follow", async () => {
    const page = await openNodePage(session);
    await giveToken(page);

    const canaryForm = page.getByRole('form', { name: 'Weight of version 1.1.0' });
    await canaryForm.getByRole('spinbutton').fill('0');
    await canaryForm.getByRole('button', { name: 'Set weight' }).click();
    await canaryForm.getByRole('status').getByText('1.1.0 now has weight 0: 0% of new executions.').waitFor();
    expect(await weights(session)).toEqual({ '1.0.0': 100, '1.1.0': 0 });
    await eventually('the instances table shows the new weight', async () =>
      (await weightCell(page, '1.1.0').textContent()) === '0' ? true : undefined,
    );

    const routed = new Set<string>();
    for (let i = 0; i < 6; i += 1) {
      const response = await fetch(`${session.controlPlane.url}/api/v1/execute/${canary}.summarize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { text: 'One. Two. Three.' } }),
      });
      expect(response.status).toBe(200);
      routed.add(response.headers.get('x-routed-version') ?? 'none');
    }
    expect([...routed]).toEqual(['1.0.0']);

    // The token stays in this tab: a reload keeps it (no prompt), and nothing long-lived holds it.
    await page.reload();
    await page.getByRole('form', { name: 'Weight of version 1.0.0' }).waitFor();
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('switchyard.connectorToken'),
      local: Object.keys(localStorage),
    }));
    expect(stored).toEqual({ session: TOKEN, local: [] });

    const restore = page.getByRole('form', { name: 'Weight of version 1.1.0' });
    await restore.getByRole('spinbutton').fill('100');
    await restore.getByRole('button', { name: 'Set weight' }).click();
    await restore.getByRole('status').getByText('1.1.0 now has weight 100: 50% of new executions.').waitFor();
    expect(await weights(session)).toEqual({ '1.0.0': 100, '1.1.0': 100 });
    await session.close(page);
  });

  it('keeps a weight out of range in the browser, and the server keeps the old one', async () => {
    const page = await openNodePage(session);
    await giveToken(page);
    const form = page.getByRole('form', { name: 'Weight of version 1.1.0' });
    const field = form.getByRole('spinbutton');
    for (const refused of ['10001', '-1', '2.5']) {
      await field.fill(refused);
      await form.getByRole('button', { name: 'Set weight' }).click();
      expect(await field.evaluate((input: HTMLInputElement) => input.validity.valid), refused).toBe(false);
    }
    expect(await form.getByRole('status').count()).toBe(0);
    expect(await weights(session)).toEqual({ '1.0.0': 100, '1.1.0': 100 });

    // "Forget" drops the token: the page asks for it again.
    await page.getByRole('button', { name: 'Forget the connector token' }).click();
    await page.getByRole('form', { name: 'Connector access' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('switchyard.connectorToken'))).toBeNull();
    await session.close(page);
  });

  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      it(`${scheme} at ${width} px: no horizontal scroll, no serious or critical axe violation`, async () => {
        const page = await openNodePage(session, { viewport: { width, height: 860 }, colorScheme: scheme });
        await giveToken(page);
        await page.getByRole('form', { name: 'Weight of version 1.1.0' }).waitFor();
        expect(await horizontalOverflow(page)).toBe(0);
        expect(await seriousViolations(page)).toEqual([]);
        await page.getByRole('heading', { name: 'Traffic weights' }).scrollIntoViewIfNeeded();
        const shot = path.join(SCREENSHOTS, `weights-${width}-${scheme}.png`);
        await page.screenshot({ path: shot });
        keepForDocs(shot);
        await session.close(page);
      });
    }
  }
});

describe('with a connector token that may only read', () => {
  let session: DashboardSession;

  beforeAll(async () => {
    session = await startDashboardSession({
      databasePrefix: 'sy_dashboard_weights_read',
      env: {
        SERVICE_CONNECTOR_TOKEN: TOKEN,
        SWITCHYARD_CONNECTOR_CAPABILITIES: 'reasoners:read,versions:read',
      },
    });
    await session.startExample('first-agent/agent.mjs', canary);
    await session.startExample('first-agent/agent.mjs', canary, { AGENT_VERSION: '1.1.0' });
  }, CHROMIUM_INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await session?.stop();
  });

  it('says the weights are read-only for this token and which capability is missing', async () => {
    const page = await openNodePage(session);
    await giveToken(page);
    await page
      .getByText(
        'Weights are read-only for this token: it lacks versions:write (it grants reasoners:read, versions:read).',
      )
      .waitFor();
    expect(await page.getByRole('form', { name: /^Weight of version/ }).count()).toBe(0);
    expect(await weights(session)).toEqual({ '1.0.0': 100, '1.1.0': 100 });
    await session.close(page);
  });
});
