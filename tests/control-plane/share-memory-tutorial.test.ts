/**
 * An agent can share state with another through memory, exactly as the pages show, and a reader
 * can run the page twice. The test reads content/getting-started/share-memory.md and runs every
 * ```bash block of it in a real shell, in page order, from the root of the repository (where the
 * page says to run them), against a real control-plane process: the two agents of
 * examples/shared-memory/agents.mjs, run unmodified, and every curl. Each answer must have the
 * shape of the ```json or ```text block the page shows after the command, compared as the
 * first-agent tutorial's test compares them (tests/support/doc-examples.ts): the same keys, the
 * same values, except timestamps (any ISO timestamp), measured durations (any number ≥ 0) and
 * generated ids (`exec_…`, `run_…`: each page id stands for one real id of each run). Then the
 * whole page runs again against the same control plane with both agents still running: each
 * agent started again must stop with the one line the page shows for a port that is taken, and
 * every answer must be the page's again (its clean-up leaves what the first run needs).
 *
 * What is substituted in the page's commands and answers (nothing else is):
 * - `http://127.0.0.1:8080`, the control plane's default address, becomes the server under test.
 * - `127.0.0.1:8002` and `127.0.0.1:8003`, the researcher's and the writer's default addresses,
 *   become free ports, given to each agent through AGENT_PORT, with CONTROL_PLANE_URL pointing it at
 *   the server under test, as the page's table of variables says.
 *
 * Commands that only read (no `-X`, no `-d`) are repeated for up to 20 s until the answer matches;
 * commands that change something run exactly once, so an answer that depends on an earlier write
 * (the writer finding the researcher's notes) shows that the write really happened.
 *
 * Needs `curl` and `bash` on PATH.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import {
  type BackgroundCommand,
  commandExamples,
  fencedBlocks,
  IdMap,
  sseDifferences,
} from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TUTORIAL = join(ROOT, 'content/getting-started/share-memory.md');
const EXAMPLE = join(ROOT, 'examples/shared-memory/agents.mjs');

/**
 * The ```bash blocks of the tutorial. A new block must be runnable by this test: raise the count
 * once it is (every block is run by the loop below, which refuses commands it cannot run).
 */
const TUTORIAL_COMMANDS = 16;

/** Numbers that are measurements, different on every run. */
const MEASURED = new Set(['duration_ms']);
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
/** The agents' default addresses on the page, by the argument that starts them. */
const PAGE_AGENTS = { researcher: '127.0.0.1:8002', writer: '127.0.0.1:8003' } as const;
type Role = keyof typeof PAGE_AGENTS;
const START_AGENT = /^node examples\/shared-memory\/agents\.mjs (researcher|writer)$/;

let server: ControlPlaneProcess;
let database: ThrowawayDatabase;
let workDir: string;
const agentPorts = {} as Record<Role, number>;
/** Every agent started; those of the first run keep running until the end. */
const agents: BackgroundCommand[] = [];
const PAGE_PATH = TUTORIAL.slice(ROOT.length);

/** The page's addresses replaced by the ones of this run. */
function localize(text: string): string {
  let out = text.split(PAGE_CONTROL_PLANE).join(server.url);
  for (const role of Object.keys(PAGE_AGENTS) as Role[]) {
    out = out.split(PAGE_AGENTS[role]).join(`127.0.0.1:${agentPorts[role]}`);
  }
  return out;
}

/**
 * Runs every command of the page in order, each agent in a terminal of its own; with
 * `portTaken`, the agents of an earlier run still hold their ports. Returns every problem found.
 */
async function runTutorial(portTaken: boolean): Promise<string[]> {
  const runner = createPageRunner({ page: PAGE_PATH, cwd: ROOT, localize, measured: MEASURED });
  const ids = new IdMap();
  const agentProblems: string[] = [];
  try {
    const problems = await runner.runAll(
      commandExamples(readFileSync(TUTORIAL, 'utf8')),
      ids,
      async (example, command) => {
        const start = START_AGENT.exec(command);
        if (!start) return false;
        const started = await runner.startAgent(example, {
          env: { CONTROL_PLANE_URL: server.url, AGENT_PORT: String(agentPorts[start[1] as Role]) },
          portTaken,
        });
        agents.push(started.agent);
        agentProblems.push(...started.problems);
        return true;
      },
    );
    // Every page id met a real one: the commands that named them ran with real ids.
    const unpaired = [...ids.pairs.keys()].filter((shown) => !/^(exec|run)_|^\d+-\d+$/.test(shown));
    if (unpaired.length > 0) problems.push(`page ids paired with something else: ${unpaired.join(', ')}`);
    return [...agentProblems, ...problems];
  } finally {
    // The reader's Ctrl-C on the stream; the agents keep running.
    await runner.stop();
  }
}

beforeAll(async () => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error('the tutorial uses curl, which is not on PATH: install it (apt-get install curl)');
  }
  workDir = mkdtempSync(join(tmpdir(), 'sy-share-memory-'));
  database = await throwawayDatabase('sy_share_memory');
  server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url });
  agentPorts.researcher = await freePort();
  agentPorts.writer = await freePort();
});

afterAll(async () => {
  await Promise.all(agents.map((command) => command.stop()));
  await server?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the share-memory tutorial (content/getting-started/share-memory.md)', () => {
  const page = readFileSync(TUTORIAL, 'utf8');
  const examples = commandExamples(page);

  it('shows excerpts of examples/shared-memory/agents.mjs, each made of whole lines of it, unchanged', () => {
    const file = `\n${readFileSync(EXAMPLE, 'utf8')}`;
    const excerpts = fencedBlocks(page).filter((b) => b.lang === 'js');
    expect(excerpts.length).toBeGreaterThan(0);
    const notInFile = excerpts.filter((b) => !file.includes(`\n${b.code}\n`)).map((b) => b.line);
    expect(notInFile, 'lines of the page whose ```js block is not in the example file').toEqual([]);
  });

  it(`has ${TUTORIAL_COMMANDS} commands, each followed by the answer it gives`, () => {
    expect(examples.map((e) => e.command.line)).toHaveLength(TUTORIAL_COMMANDS);
    expect(examples.filter((e) => !e.shown).map((e) => `${PAGE_PATH}:${e.command.line}`)).toEqual([]);
  });

  it('runs every command as the page shows it and gets the answers the page shows', async () => {
    const problems = await runTutorial(false);
    const output = agents.map((agent) => agent.output()).join('\n');
    expect(problems, `agents' output:\n${output}\ncontrol plane:\n${server.output()}`).toEqual([]);
  }, 180_000);

  it("runs again with the first run's agents still running: each agent started again says in one line that its port is taken, and every answer is the page's", async () => {
    const problems = await runTutorial(true);
    const output = agents.map((agent) => agent.output()).join('\n');
    expect(problems, `agents' output:\n${output}\ncontrol plane:\n${server.output()}`).toEqual([]);
  }, 180_000);

  it("records the writer's execution as a child of the researcher's, as the page says", async () => {
    const response = await fetch(`${server.url}/api/v1/workflows/wf_octopus/dag`);
    expect(response.status).toBe(200);
    const dag = (await response.json()) as {
      nodes: Array<{ execution_id: string; parent_execution_id: string | null; target: string }>;
    };
    // One researcher and one writer execution for each run of the page.
    const researchers = dag.nodes.filter((n) => n.target === 'researcher.collect');
    const writers = dag.nodes.filter((n) => n.target === 'writer.draft');
    expect(researchers).toHaveLength(2);
    expect(writers).toHaveLength(2);
    for (const researcher of researchers) expect(researcher.parent_execution_id).toBeNull();
    expect(writers.map((w) => w.parent_execution_id).sort()).toEqual(
      researchers.map((r) => r.execution_id).sort(),
    );
  });

  // Not on the page, but in the example's code: the agents pass X-Session-ID on, so a session's
  // value sits between the workflow's and the global one for both of them.
  it("passes the caller's X-Session-ID on to memory and to the writer: a session's style wins over global", async () => {
    const post = (path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const style = { max_facts: 1, sign_off: '(session)' };
    const set = await post(
      '/api/v1/memory/set',
      { key: 'style', data: style },
      { 'X-Session-ID': 'sess_s1' },
    );
    expect(await set.json()).toMatchObject({ scope: 'session', scope_id: 'sess_s1' });

    const headers = { 'X-Workflow-ID': 'wf_session_check', 'X-Session-ID': 'sess_s1' };
    const response = await post(
      '/api/v1/execute/researcher.collect',
      { input: { topic: 'octopus' } },
      headers,
    );
    const body = (await response.json()) as { status: string; result: unknown };
    expect(body.status, JSON.stringify(body)).toBe('succeeded');
    expect(body.result).toEqual({
      text: 'octopus: An octopus has three hearts. (session)',
      notes_from: 'workflow',
      style_from: 'session',
    });
  });
});

// The stream comparison the test above relies on must be able to fail.
describe('comparing a stream with the one a page shows (sseDifferences)', () => {
  const change = (key: string, timestamp: string) =>
    `data: {"type":"memory_change","key":"${key}","data":{"n":1},"timestamp":"${timestamp}"}`;
  const shown = [
    'retry: 3000',
    ': connected',
    '',
    'id: 7512-4081',
    'event: memory_change',
    change('style', '2026-11-22T06:40:30.335Z'),
    '',
    'id: 7514-4083',
    'event: memory_change',
    change('notes', '2026-11-22T06:40:38.353Z'),
  ].join('\n');
  const rules = () => ({ measured: new Set<string>(), ids: new IdMap() });

  it('accepts the same events with other ids and timestamps, and keep-alives anywhere', () => {
    const real = [
      'retry: 3000',
      ': connected',
      '',
      'id: 3-1',
      'event: memory_change',
      change('style', '2026-12-01T10:00:00.000Z'),
      '',
      ': keep-alive',
      '',
      'id: 15-2',
      'event: memory_change',
      change('notes', '2026-12-01T10:00:01.000Z'),
      '',
      '',
    ].join('\n');
    expect(sseDifferences(real, shown, rules())).toEqual([]);
  });

  it('reports a missing or unfinished event, another name, another value and an id of another shape', () => {
    const first = [
      'retry: 3000',
      '',
      'id: 3-1',
      'event: memory_change',
      change('style', '2026-12-01T10:00:00.000Z'),
    ];
    expect(sseDifferences(`${first.join('\n')}\n\n`, shown, rules())).toEqual(['expected 2 events, got 1']);
    // The second event has not received its closing blank line yet.
    const unfinished = [
      ...first,
      '',
      'id: 4-2',
      'event: memory_change',
      change('notes', '2026-12-01T10:00:00.000Z'),
    ];
    expect(sseDifferences(`${unfinished.join('\n')}\n`, shown, rules())).toEqual([
      'expected 2 events, got 1',
    ]);
    const wrong = [
      'retry: 1000',
      '',
      'id: abc',
      'event: memory_change',
      change('style', '2026-12-01T10:00:00.000Z'),
      '',
      'id: 4-2',
      'event: other',
      change('draft', '2026-12-01T10:00:00.000Z'),
      '',
      '',
    ].join('\n');
    expect(sseDifferences(wrong, shown, rules())).toEqual([
      'retry: expected 3000, got 1000',
      'event 1: expected an id like 7512-4081, got abc',
      'event 2: expected event: memory_change, got other',
      'event 2 data.key: expected "notes", got "draft"',
    ]);
  });
});
