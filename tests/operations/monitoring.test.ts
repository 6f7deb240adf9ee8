/**
 * content/operations/monitoring.md and deploy/prometheus/alerts.yml.
 *
 * The page's commands run in page order against a control plane started with the page's own
 * command (the build, JSON logs at info) on a fresh database: its log lines have the keys the page
 * shows, the X-Request-ID sent comes back and names the request's log line, the health answer and
 * the two database gauges are what the page shows, and `promtool check rules` prints what the page
 * shows.
 *
 * Then the control plane is given real traffic (a real agent answers one execution; one webhook
 * delivery to a receiver that is not there is dead-lettered), so that labelled series exist, and:
 * - every metric an alert expression names is one the control plane serves, and every label it
 *   matches on is one that metric has (or `job`/`instance`, which Prometheus adds);
 * - a real Prometheus runs with the page's scrape configuration and alerts.yml, scraping this
 *   control plane: the target is up, every rule evaluates without error, the dead-letter alert is
 *   active (pending or firing) and the absent-replica alert is not.
 *
 * Substituted: `http://127.0.0.1:8080` and the scrape targets become the server under test; the
 * rule file's path becomes this repository's alerts.yml; 15 s intervals become 1 s (a deadline, not
 * a timing assertion: the test waits for the state, whatever it takes).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deadAgentUrl } from '../../apps/control-plane/test/helpers/agents.ts';
import { startExecutionAgent } from '../../apps/control-plane/test/helpers/execution-agent.ts';
import {
  type BackgroundCommand,
  fencedBlocks,
  IdMap,
  runShell,
  startShell,
} from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { operationsPage, ROOT, runPageCommand, whereOf } from '../support/operations-pages.ts';
import { createPageRunner } from '../support/page-commands.ts';
import {
  ensurePrometheus,
  PROMETHEUS,
  PROMETHEUS_INSTALL_TIMEOUT_MS,
  PROMTOOL,
} from '../support/promtool.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yml');
const { page, markdown, examples } = operationsPage('monitoring.md');
const [startServer, requestId, health, gauges, checkRules] = examples;

let workDir: string;
let database: ThrowawayDatabase;
let port: number;
let server: BackgroundCommand;
const cleanups: Array<() => Promise<void>> = [];
const localize = (text: string) => text.split(PAGE_CONTROL_PLANE).join(`http://127.0.0.1:${port}`);
const url = () => `http://127.0.0.1:${port}`;

beforeAll(async () => {
  await ensurePrometheus();
  workDir = mkdtempSync(join(tmpdir(), 'sy-monitoring-'));
  database = await throwawayDatabase('sy_monitoring');
  port = await freePort();
  // The page's own command, from the repository root as the page runs it; the data directory and
  // port of this run come from the environment, as a deployment would set them.
  server = startShell(startServer!.command.code, {
    cwd: ROOT,
    env: {
      CONTROL_PLANE_PORT: String(port),
      SWITCHYARD_DATA_DIR: workDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      // For the dead-letter below: a receiver on 127.0.0.1 over plain HTTP, given up after one try.
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_ATTEMPTS: '1',
    },
  });
  await server.waitFor(`listening on http://127.0.0.1:${port}`, 60_000);
}, PROMETHEUS_INSTALL_TIMEOUT_MS + 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await server?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** The JSON log lines the server wrote so far. */
function logLines(): Array<Record<string, unknown>> {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/** Metric families the server serves: name → type, from the `# TYPE` lines. */
function families(exposition: string): Map<string, string> {
  return new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Every sample name a family yields (a histogram's _bucket, _sum, _count). */
function sampleNames(types: Map<string, string>): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of types) {
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return names;
}

/** Label names seen on each sample name's series. */
function labelsBySample(exposition: string): Map<string, Set<string>> {
  const labels = new Map<string, Set<string>>();
  for (const line of exposition.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? /.exec(line);
    if (!sample) continue;
    const set = labels.get(sample[1]!) ?? new Set<string>();
    for (const pair of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) set.add(pair[1]!);
    labels.set(sample[1]!, set);
  }
  return labels;
}

const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring']);

/**
 * The metric names of a PromQL expression and the label names each selector matches on.
 * Hand-written (no PromQL parser is packaged for Node): strings, ranges and grouping clauses are
 * blanked out, then every identifier not followed by "(" (a function) and not a keyword is a
 * metric name. promtool, run on the same file, checks the syntax itself.
 */
function selectors(expr: string): Array<{ metric: string; labels: string[] }> {
  const blanked = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const found: Array<{ metric: string; labels: string[] }> = [];
  for (const match of blanked.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()(\s*\{[^}]*\})?/g)) {
    if (PROMQL_WORDS.has(match[1]!)) continue;
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map(
      (m) => m[1]!,
    );
    found.push({ metric: match[1]!, labels });
  }
  return found;
}

interface Rule {
  alert: string;
  expr: string;
}

function rules(): Rule[] {
  const file = parse(readFileSync(ALERTS, 'utf8')) as { groups: Array<{ rules: Rule[] }> };
  return file.groups.flatMap((group) => group.rules);
}

/** Puts the control plane in a state with labelled series: one execution, one dead letter. */
async function driveTraffic(): Promise<void> {
  const agent = await startExecutionAgent({
    controlPlaneUrl: url(),
    nodeId: 'hello-agent',
    version: '1.0.0',
    reasoners: { summarize: { kind: 'answer' } },
  });
  cleanups.push(async () => {
    agent.stopHeartbeats();
    await agent.close();
  });
  await agent.register();
  const receiver = `${await deadAgentUrl()}/hooks/switchyard`;
  await eventually('an execution with a webhook is accepted', async () => {
    const response = await fetch(`${url()}/api/v1/execute/async/hello-agent.summarize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { text: 'A long report.' }, webhook: { url: receiver } }),
    });
    if (response.status !== 202) return undefined;
    const body = await response.json();
    expect(body.webhook_registered, JSON.stringify(body)).toBe(true);
    return body;
  });
  await eventually(
    'the delivery to the missing receiver is dead-lettered',
    async () => {
      const metrics = await (await fetch(`${url()}/metrics`)).text();
      return /^service_webhook_dead_letters 1$/m.test(metrics) ? true : undefined;
    },
    () => server.output(),
  );
}

describe(page, () => {
  it('has five commands, each but the first followed by what it prints', () => {
    expect(examples).toHaveLength(5);
    expect(
      examples
        .slice(1)
        .filter((e) => !e.shown)
        .map((e) => whereOf(page, e)),
    ).toEqual([]);
  });

  it('logs JSON lines with the keys the page shows', async () => {
    await eventually('a request line', async () => {
      // A health check that succeeds is logged at debug, below the page's `info`.
      await fetch(`${url()}/api/v1/executions`);
      return logLines().some((line) => line.msg === 'request') ? true : undefined;
    });
    const shown = startServer!.shown!.code.split('\n').map((line) => JSON.parse(line));
    const real = logLines();
    for (const line of shown) {
      const kind = (line.msg as string).startsWith('listening on') ? 'listening' : line.msg;
      const match = real.find((r) =>
        kind === 'listening' ? String(r.msg).startsWith('listening on') : r.msg === kind,
      );
      expect(match, `a ${kind} line in:\n${server.stdout()}`).toBeDefined();
      expect(Object.keys(match!).sort(), `${kind} line`).toEqual(Object.keys(line).sort());
    }
  });

  it('echoes the X-Request-ID sent, and logs the request under it', async () => {
    await runPageCommand(page, requestId!, { localize });
    await eventually('the request line carries the id', async () =>
      logLines().some((line) => line.msg === 'request' && line.req_id === 'deploy-check-1')
        ? true
        : undefined,
    );
  });

  it('answers the health check the page shows', async () => {
    const runner = createPageRunner({ page, cwd: ROOT, localize, measured: new Set(['response_time']) });
    expect(await runner.runCurl(health!, new IdMap())).toEqual([]);
  });

  it('serves the two database gauges the page shows', async () => {
    await runPageCommand(page, gauges!, { localize });
  });

  it('promtool accepts alerts.yml and prints what the page shows', async () => {
    await runPageCommand(page, checkRules!);
  });

  it('names only metrics and labels the control plane serves in alerts.yml', async () => {
    await driveTraffic();
    const exposition = await (await fetch(`${url()}/metrics`)).text();
    const served = sampleNames(families(exposition));
    const labels = labelsBySample(exposition);
    const problems: string[] = [];
    const all = rules();
    expect(all.length).toBeGreaterThan(0);
    for (const rule of all) {
      const found = selectors(rule.expr);
      if (found.length === 0) problems.push(`${rule.alert}: no metric found in ${rule.expr}`);
      for (const { metric, labels: matched } of found) {
        if (!served.has(metric)) {
          problems.push(`${rule.alert}: ${metric} is not served`);
          continue;
        }
        for (const label of matched) {
          if (label === 'job' || label === 'instance') continue;
          if (!labels.get(metric)?.has(label))
            problems.push(`${rule.alert}: ${metric} has no label ${label}`);
        }
      }
    }
    expect(problems, exposition).toEqual([]);
  });

  it('loads into a real Prometheus scraping the control plane: every rule evaluates, the dead-letter alert is active', async () => {
    const scrape = fencedBlocks(markdown).find((b) => b.lang === 'yaml' && b.code.includes('scrape_configs'));
    expect(scrape).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'sy-prometheus-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const config = scrape!.code
      .replace("['cp-1.internal:8080', 'cp-2.internal:8080']", `['127.0.0.1:${port}']`)
      .replace('/etc/prometheus/switchyard-alerts.yml', ALERTS)
      .replaceAll('15s', '1s');
    expect(config).toContain(`127.0.0.1:${port}`);
    const configFile = join(dir, 'prometheus.yml');
    writeFileSync(configFile, config);
    const check = await runShell(`${PROMTOOL} check config ${configFile}`);
    expect(check.code, `${check.stdout}${check.stderr}`).toBe(0);

    const prometheusPort = await freePort();
    const prometheus = startShell(
      [
        PROMETHEUS,
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
      ].join(' '),
    );
    cleanups.push(() => prometheus.stop());
    const api = `http://127.0.0.1:${prometheusPort}/api/v1`;
    const wanted = rules().map((r) => r.alert);
    const state = await eventually(
      'every rule evaluated, the dead-letter alert active',
      async () => {
        const targets = await (await fetch(`${api}/targets`)).json();
        const up = targets.data.activeTargets.every((t: { health: string }) => t.health === 'up');
        const answer = await (await fetch(`${api}/rules`)).json();
        const loaded = answer.data.groups.flatMap(
          (g: { rules: Array<{ name: string; health: string; state: string; lastError?: string }> }) =>
            g.rules,
        );
        const evaluated = loaded.filter((r: { health: string }) => r.health !== 'unknown');
        const dead = loaded.find((r: { name: string }) => r.name === 'SwitchyardWebhookDeadLetters');
        if (!up || evaluated.length < wanted.length || dead?.state === 'inactive') return undefined;
        return loaded as Array<{ name: string; health: string; state: string; lastError?: string }>;
      },
      () => prometheus.output(),
      90_000,
    );
    expect(state.map((r) => r.name).sort()).toEqual([...wanted].sort());
    expect(state.filter((r) => r.health !== 'ok')).toEqual([]);
    expect(['pending', 'firing']).toContain(
      state.find((r) => r.name === 'SwitchyardWebhookDeadLetters')!.state,
    );
    expect(state.find((r) => r.name === 'SwitchyardControlPlaneAbsent')!.state).toBe('inactive');
  }, 180_000);
});
