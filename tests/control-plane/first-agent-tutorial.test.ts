/**
 * The first-agent tutorial (content/getting-started/first-agent.md) works as written, and works
 * again when a reader runs it a second time. The test reads the page itself, saves its agent code
 * as agent.mjs, and runs every ```bash block of the page in a real shell, in page order, against a
 * real control-plane process (started as `npm start` starts it). Each answer must have the shape of
 * the ```json or ```text block the page shows after the command: the same keys, the same values,
 * except where a value necessarily differs from run to run (see "What may differ" below). Then it
 * runs the whole page again against the same control plane with the first agent still running, as
 * a reader who comes back to the page would: `node agent.mjs` must then stop with the one line the
 * page shows for a port that is taken, and every other answer must be the page's again. Last, it
 * runs the home page's execute example, and the workflow page's parent, child and DAG, against the
 * same agent.
 *
 * What is substituted in the page's commands and answers, and why (nothing else is):
 * - `http://127.0.0.1:8080`, the control plane's default address, becomes the address of the
 *   server under test: a free port, since a developer's own `npm start` may hold 8080.
 * - `127.0.0.1:8001`, the agent's default address, becomes a free port, given to the agent through
 *   AGENT_PORT (and the same port on the second run, which finds it taken), and CONTROL_PLANE_URL
 *   points it at the server under test, as the page's table of variables says. AGENT_ID stays
 *   unset: the agent is `hello-agent`, as on the page (each test run has a database of its own).
 * - Ids (`exec_…`, `run_…`) the page shows stand for the real ids of each run: the first time an
 *   answer carries one, the page id is paired with the real one, and a later command naming the
 *   page id (looking an execution up) is run with the real id. A page id must stay paired with one
 *   real id: the id an execute call answered is the one its status record shows.
 *
 * What may differ: timestamps (any ISO timestamp matches), measured durations (`MEASURED` keys:
 * any number ≥ 0), and the heartbeat interval the control plane has learned from the agent
 * (`observed_heartbeat_interval_seconds`), which depends on how long the agent has been running:
 * it must be what the control plane's own rule gives for the heartbeats of the answer (and the
 * page's sample must be what the rule gives for the page's own timestamps). Commands that only
 * read (no `-X`, no `-d`) are repeated for up to 20 s until the answer matches, as a reader running
 * them a few seconds later would see (the first health probe of a new agent, an async execution
 * finishing); commands that change something run exactly once.
 *
 * Needs `curl` and `bash` on PATH (Debian and Ubuntu images may lack curl: `apt-get install curl`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextObservedInterval } from '../../apps/control-plane/src/modules/nodes/lifecycle.ts';
import { nodeLifecycleSettings } from '../../apps/control-plane/src/modules/nodes/settings.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import {
  type BackgroundCommand,
  type CommandExample,
  commandExamples,
  type DerivedCheck,
  fencedBlocks,
  IdMap,
} from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TUTORIAL = 'content/getting-started/first-agent.md';
/** Pages whose examples call the tutorial's agent; they run after the tutorial, against its server. */
const PAGES_ON_THE_AGENT = ['content/index.md', 'content/concepts/workflows.md'];
const EXAMPLE_AGENT = join(ROOT, 'examples/first-agent/agent.mjs');

/**
 * The ```bash blocks of the tutorial. A new block must be runnable by this test: raise the count
 * once it is (every block is run by the loop below, which refuses commands it cannot run).
 */
const TUTORIAL_COMMANDS = 13;

/** Numbers that are measurements, different on every run. */
const MEASURED = new Set(['duration_ms', 'last_check_duration_ms', 'response_time']);
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const PAGE_AGENT = '127.0.0.1:8001';

/** The presence settings the server under test runs with: the defaults. */
const RHYTHM = {
  heartbeatTtlMs: nodeLifecycleSettings.heartbeatTtlMs.schema.parse(
    nodeLifecycleSettings.heartbeatTtlMs.default,
  ),
  maxHeartbeatTtlMs: nodeLifecycleSettings.maxHeartbeatTtlMs.schema.parse(
    nodeLifecycleSettings.maxHeartbeatTtlMs.default,
  ),
  assumedHeartbeatIntervalMs: nodeLifecycleSettings.assumedHeartbeatIntervalMs.schema.parse(
    nodeLifecycleSettings.assumedHeartbeatIntervalMs.default,
  ),
};
/** HEARTBEAT_MS of the example agent. */
const AGENT_HEARTBEAT_MS = 5_000;
/**
 * How far a learned interval may be from the rule's value for whole 5 s heartbeats: the agent's
 * timers drift by some milliseconds a beat, and its first heartbeat follows its registration by a
 * few (a second of drift moves the interval by at most 0.7 s).
 */
const LEARNED_TOLERANCE_S = 0.7;

/**
 * The interval the control plane has learned from an instance that turned ready at
 * `status_changed_at` (right after its registration and first heartbeat) and has sent a
 * heartbeat every 5 s since, up to `last_heartbeat`: the control plane's own rule
 * (lifecycle.nextObservedInterval) applied to each of those heartbeats.
 */
function learnedIntervalSeconds(instance: Record<string, unknown>): { seconds: number; beats: number } {
  const elapsed =
    Date.parse(String(instance.last_heartbeat)) - Date.parse(String(instance.status_changed_at));
  const beats = Math.max(0, Math.round(elapsed / AGENT_HEARTBEAT_MS));
  // The first heartbeat follows the registration at once: the assumed interval, barely decayed.
  let interval = nextObservedInterval(null, 1, RHYTHM)!;
  for (let beat = 0; beat < beats; beat++)
    interval = nextObservedInterval(interval, AGENT_HEARTBEAT_MS, RHYTHM)!;
  return { seconds: interval / 1000, beats };
}

/** observed_heartbeat_interval_seconds, held to the rule on the page and in the real answer. */
const learnedInterval: DerivedCheck = (actual, shown) => {
  const key = 'observed_heartbeat_interval_seconds';
  const page = learnedIntervalSeconds(shown);
  if (typeof shown[key] !== 'number' || Math.abs(shown[key] - page.seconds) > LEARNED_TOLERANCE_S) {
    return `the page shows ${shown[key]} after ${page.beats} heartbeats of 5 s (by its last_heartbeat and status_changed_at), but the control plane has learned ${page.seconds.toFixed(3)} by then`;
  }
  const real = learnedIntervalSeconds(actual);
  if (typeof actual[key] !== 'number' || Math.abs(actual[key] - real.seconds) > LEARNED_TOLERANCE_S) {
    return `expected about ${real.seconds.toFixed(3)} after ${real.beats} heartbeats of 5 s, got ${JSON.stringify(actual[key])}`;
  }
  return undefined;
};

let server: ControlPlaneProcess;
let database: ThrowawayDatabase;
let workDir: string;
let agentPort: number;
/** Every `node agent.mjs` started; the first run's keeps running until the end. */
const agents: BackgroundCommand[] = [];

/** The page's addresses replaced by the ones of this run. */
function localize(text: string): string {
  return text.split(PAGE_CONTROL_PLANE).join(server.url).split(PAGE_AGENT).join(`127.0.0.1:${agentPort}`);
}

function pageRunner(page: string) {
  return createPageRunner({
    page,
    cwd: workDir,
    localize,
    measured: MEASURED,
    derived: { observed_heartbeat_interval_seconds: learnedInterval },
  });
}

beforeAll(async () => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error('the tutorial uses curl, which is not on PATH: install it (apt-get install curl)');
  }
  workDir = mkdtempSync(join(tmpdir(), 'sy-tutorial-'));
  database = await throwawayDatabase('sy_tutorial');
  server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url });
  agentPort = await freePort();
});

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.stop()));
  await server?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the first-agent tutorial (content/getting-started/first-agent.md)', () => {
  const page = readFileSync(join(ROOT, TUTORIAL), 'utf8');
  const examples = commandExamples(page);

  /**
   * Runs every command of the page in order, `node agent.mjs` in a terminal of its own; with
   * `portTaken`, the agent of an earlier run still holds the port. Returns every problem found.
   */
  async function runTutorial(portTaken: boolean): Promise<string[]> {
    const runner = pageRunner(TUTORIAL);
    const ids = new IdMap();
    const agentProblems: string[] = [];
    const problems = await runner.runAll(examples, ids, async (example: CommandExample, command) => {
      if (command !== 'node agent.mjs') return false;
      const started = await runner.startAgent(example, {
        env: { CONTROL_PLANE_URL: server.url, AGENT_PORT: String(agentPort) },
        portTaken,
      });
      agents.push(started.agent);
      agentProblems.push(...started.problems);
      return true;
    });
    await runner.stop();
    // Every page id met a real one: the commands that named them ran with real ids.
    const unpaired = [...ids.pairs.keys()].filter((shown) => !/^(exec|run)_/.test(shown));
    if (unpaired.length > 0) problems.push(`page ids paired with something else: ${unpaired.join(', ')}`);
    return [...agentProblems, ...problems];
  }

  it('shows the agent of examples/first-agent/agent.mjs, unchanged', () => {
    const code = fencedBlocks(page).filter((b) => b.lang === 'js');
    expect(code).toHaveLength(1);
    expect(`${code[0]!.code}\n`).toBe(readFileSync(EXAMPLE_AGENT, 'utf8'));
  });

  it(`has ${TUTORIAL_COMMANDS} commands, each followed by the answer it gives`, () => {
    expect(examples.map((e) => e.command.line)).toHaveLength(TUTORIAL_COMMANDS);
    const withoutAnswer = examples.filter((e) => !e.shown).map((e) => `${TUTORIAL}:${e.command.line}`);
    expect(withoutAnswer).toEqual([]);
  });

  it('runs every command as the page shows it and gets the answers the page shows', async () => {
    // "Save this as agent.mjs": the page's code block, in the directory the commands run in.
    const [code] = fencedBlocks(page).filter((b) => b.lang === 'js');
    writeFileSync(join(workDir, 'agent.mjs'), `${code!.code}\n`);
    const problems = await runTutorial(false);
    const output = agents.map((agent) => agent.output()).join('\n');
    expect(problems, `agent output:\n${output}\n${server.output()}`).toEqual([]);
    // Each read may be repeated for 20 s: a page with several wrong answers takes a while to report.
  }, 180_000);

  it("runs again with the first run's agent still running: the second agent says in one line that its port is taken, and every answer is the page's", async () => {
    const problems = await runTutorial(true);
    const output = agents.map((agent) => agent.output()).join('\n');
    expect(problems, `agents' output:\n${output}\n${server.output()}`).toEqual([]);
  }, 180_000);

  // The home page's execute example and the workflow page's parent, child and DAG run against
  // the agent the tutorial started (so they need the tests above to have passed).
  for (const path of PAGES_ON_THE_AGENT) {
    it(`runs the examples of ${path} against the tutorial's agent`, async () => {
      const found = commandExamples(readFileSync(join(ROOT, path), 'utf8'));
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((e) => !e.shown).map((e) => `${path}:${e.command.line}`)).toEqual([]);
      const runner = pageRunner(path);
      const problems = await runner.runAll(found, new IdMap());
      expect(problems).toEqual([]);
    }, 120_000);
  }
});
