/**
 * Issue 9, "done when": the first-agent tutorial (content/getting-started/first-agent.md) works as
 * written. The test reads the page itself, saves its agent code as agent.mjs, and runs every
 * ```bash block of the page in a real shell, in page order, against a real control-plane process
 * (started as `npm start` starts it). Each answer must have the shape of the ```json or ```text
 * block the page shows after the command: the same keys, the same values, except where a value
 * necessarily differs from run to run (see "What may differ" below). Then it runs the home page's
 * execute example, and the workflow page's parent, child and DAG, against the same agent.
 *
 * What is substituted in the page's commands and answers, and why (nothing else is):
 * - `http://127.0.0.1:8080`, the control plane's default address, becomes the address of the
 *   server under test: a free port, since a developer's own `npm start` may hold 8080.
 * - `127.0.0.1:8001`, the agent's default address, becomes a free port, given to the agent through
 *   AGENT_PORT, and CONTROL_PLANE_URL points it at the server under test, as the page's table of
 *   variables says. AGENT_ID stays unset: the agent is `hello-agent`, as on the page (each run has a
 *   database of its own).
 * - Ids (`exec_…`, `run_…`) the page shows stand for the real ids of this run: the first time an
 *   answer carries one, the page id is paired with the real one, and a later command naming the
 *   page id (looking an execution up) is run with the real id. A page id must stay paired with one
 *   real id: the id an execute call answered is the one its status record shows.
 *
 * What may differ: timestamps (any ISO timestamp matches) and measured durations
 * (`MEASURED` keys: any number ≥ 0). Commands that only read (no `-X`, no `-d`) are repeated
 * for up to 20 s until the answer matches, as a reader running them a few seconds later would see
 * (the first health probe of a new agent, an async execution finishing); commands that change
 * something run exactly once.
 *
 * Needs `curl` and `bash` on PATH (Debian and Ubuntu images may lack curl: `apt-get install curl`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import {
  type BackgroundCommand,
  type CommandExample,
  commandExamples,
  fencedBlocks,
  IdMap,
  runShell,
  shapeDifferences,
  startShell,
} from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TUTORIAL = join(ROOT, 'content/getting-started/first-agent.md');
/** Pages whose examples call the tutorial's agent; they run after the tutorial, against its server. */
const PAGES_ON_THE_AGENT = ['content/index.md', 'content/concepts/workflows.md'];
const EXAMPLE_AGENT = join(ROOT, 'examples/first-agent/agent.mjs');

/**
 * The ```bash blocks of the tutorial. A new block must be runnable by this test: raise the count
 * once it is (every block is run by the loop below, which refuses commands it cannot run).
 */
const TUTORIAL_COMMANDS = 9;

/** Numbers that are measurements, different on every run. */
const MEASURED = new Set([
  'duration_ms',
  'last_check_duration_ms',
  'response_time',
  'observed_heartbeat_interval_seconds',
]);
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const PAGE_AGENT = '127.0.0.1:8001';
const READ_RETRY_MS = 20_000;

let server: ControlPlaneProcess;
let database: ThrowawayDatabase;
let workDir: string;
let agentPort: number;
let agent: BackgroundCommand | undefined;

/** The page's addresses replaced by the ones of this run. */
function localize(text: string): string {
  return text.split(PAGE_CONTROL_PLANE).join(server.url).split(PAGE_AGENT).join(`127.0.0.1:${agentPort}`);
}

function where(page: string, example: CommandExample): string {
  return `${page.slice(ROOT.length)}:${example.command.line}`;
}

/** Whether the command only reads: repeating it changes nothing. */
function onlyReads(command: string): boolean {
  return !/\s-X\s|\s-d\s|--data/.test(command);
}

/**
 * Runs one `curl` example and compares its answer with the page's ```json block; returns the
 * problems (none when it matches). Pairs the ids of a matching answer into `ids`.
 */
async function runCurl(page: string, example: CommandExample, ids: IdMap): Promise<string[]> {
  const command = ids.substitute(localize(example.command.code));
  const deadline = Date.now() + (onlyReads(command) ? READ_RETRY_MS : 0);
  for (;;) {
    const result = await runShell(command, { cwd: workDir, timeoutMs: 30_000 });
    let problems: string[];
    if (result.code !== 0) {
      problems = [`curl exited with ${result.code}: ${result.stderr.trim()}`];
    } else if (!example.shown) {
      problems = [];
    } else {
      let answer: unknown;
      try {
        answer = JSON.parse(result.stdout);
      } catch {
        answer = undefined;
      }
      if (answer === undefined) {
        problems = [`the answer is not JSON: ${result.stdout.slice(0, 500)}`];
      } else {
        const attempt = ids.clone();
        problems = shapeDifferences(answer, JSON.parse(example.shown.code), {
          measured: MEASURED,
          ids: attempt,
          rewrite: localize,
        });
        if (problems.length === 0) ids.adopt(attempt);
        else problems.push(`the whole answer: ${result.stdout}`);
      }
    }
    if (problems.length === 0 || Date.now() > deadline) {
      return problems.map((p) => `${where(page, example)} \`${command.replace(/\s*\\\n\s*/g, ' ')}\`: ${p}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
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
  await agent?.stop();
  await server?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the first-agent tutorial (content/getting-started/first-agent.md)', () => {
  const page = readFileSync(TUTORIAL, 'utf8');
  const examples = commandExamples(page);

  it('shows the agent of examples/first-agent/agent.mjs, unchanged', () => {
    const code = fencedBlocks(page).filter((b) => b.lang === 'js');
    expect(code).toHaveLength(1);
    expect(`${code[0]!.code}\n`).toBe(readFileSync(EXAMPLE_AGENT, 'utf8'));
  });

  it(`has ${TUTORIAL_COMMANDS} commands, each followed by the answer it gives`, () => {
    expect(examples.map((e) => e.command.line)).toHaveLength(TUTORIAL_COMMANDS);
    const withoutAnswer = examples.filter((e) => !e.shown).map((e) => where(TUTORIAL, e));
    expect(withoutAnswer).toEqual([]);
  });

  it('runs every command as the page shows it and gets the answers the page shows', async () => {
    // "Save this as agent.mjs": the page's code block, in the directory the commands run in.
    const [code] = fencedBlocks(page).filter((b) => b.lang === 'js');
    writeFileSync(join(workDir, 'agent.mjs'), `${code!.code}\n`);

    const ids = new IdMap();
    const problems: string[] = [];
    for (const example of examples) {
      const command = example.command.code.trim();
      if (command === 'node agent.mjs') {
        // A second terminal: the agent keeps running while the next commands are typed.
        agent = startShell(command, {
          cwd: workDir,
          env: { CONTROL_PLANE_URL: server.url, AGENT_PORT: String(agentPort) },
        });
        expect(example.shown?.lang).toBe('text');
        for (const line of example.shown!.code.split('\n').filter((l) => l.trim() !== '')) {
          await agent.waitFor(localize(line));
        }
      } else if (command.startsWith('curl ')) {
        problems.push(...(await runCurl(TUTORIAL, example, ids)));
      } else {
        problems.push(`${where(TUTORIAL, example)}: this test does not know how to run \`${command}\``);
      }
    }
    expect(problems, `agent output:\n${agent?.output()}\n${server.output()}`).toEqual([]);
    // Every page id met a real one: the commands that named them ran with real ids.
    expect([...ids.pairs.keys()].every((shown) => /^(exec|run)_/.test(shown))).toBe(true);
    // Each read may be repeated for READ_RETRY_MS: a page with several wrong answers takes a while to report.
  }, 180_000);

  // The home page's execute example and the workflow page's parent, child and DAG run against
  // the agent the tutorial started (so they need the test above to have passed).
  for (const path of PAGES_ON_THE_AGENT) {
    it(`runs the examples of ${path} against the tutorial's agent`, async () => {
      const other = join(ROOT, path);
      const found = commandExamples(readFileSync(other, 'utf8'));
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((e) => !e.shown).map((e) => where(other, e))).toEqual([]);
      const ids = new IdMap();
      const problems: string[] = [];
      for (const example of found) problems.push(...(await runCurl(other, example, ids)));
      expect(problems).toEqual([]);
    });
  }
});
