/**
 * `switchyard dag`, the build run as a child process against a real control plane (PGlite, or
 * PostgreSQL when DATABASE_URL is set): the shared-memory example agents (a researcher whose
 * reasoner calls the writer), and agents of this test whose planner calls a function that fails.
 * Every command of content/reference/cli-dag.md runs as the page shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, startCliSession, startTestAgent, type TestAgent } from '../support/cli.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;
const agents: TestAgent[] = [];

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_dag' });
  await session.startExampleWith('shared-memory/agents.mjs', ['writer'], 'writer');
  await session.startExampleWith('shared-memory/agents.mjs', ['researcher'], 'researcher');
  const child = async (fn: string, parent: string, workflow: string) => {
    const response = await fetch(`${session.controlPlane.url}/api/v1/execute/dag-writer.${fn}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': session.apiKey,
        'x-parent-execution-id': parent,
        'x-workflow-id': workflow,
      },
      body: JSON.stringify({ input: {} }),
    });
    return (await response.json()) as { status: string };
  };
  agents.push(
    await startTestAgent(session, 'dag-writer', {
      draft: async () => ({ text: 'draft' }),
      review: async () => {
        throw new Error('reviewer quota exceeded');
      },
    }),
    await startTestAgent(session, 'dag-planner', {
      plan: async (_input, headers) => {
        const parent = String(headers['x-execution-id']);
        const workflow = String(headers['x-workflow-id']);
        const draft = await child('draft', parent, workflow);
        const review = await child('review', parent, workflow);
        return { drafted: draft.status, reviewed: review.status };
      },
    }),
  );
  const run = await session.cli(['call', 'dag-planner.plan', '--workflow', 'wf-cli-dag']);
  expect(run.code, run.stderr).toBe(0);
});

afterAll(async () => {
  for (const agent of agents) await agent.stop();
  await session?.stop();
});

describe('switchyard dag', () => {
  it('draws the tree with status, duration and the error of the failed child', async () => {
    const { code, stdout } = await session.cli(['dag', 'wf-cli-dag']);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('wf-cli-dag  3 executions, depth 2');
    expect(lines[1]).toMatch(/^└─ dag-planner\.plan {2}succeeded {2}\d+ ms {2}exec_\w{26}$/);
    expect(lines[2]).toMatch(/^ {3}├─ dag-writer\.draft {2}succeeded {2}\d+ ms {2}exec_\w{26}$/);
    expect(lines[3]).toMatch(
      /^ {3}└─ dag-writer\.review {2}failed {2}\d+ ms {2}exec_\w{26} {2}error: .*reviewer quota exceeded/,
    );
    expect(lines).toHaveLength(4);
  });

  it("--json prints the DAG with each execution's error", async () => {
    const { stdout } = await session.cli(['dag', 'wf-cli-dag', '--json']);
    const dag = JSON.parse(stdout);
    expect(dag).toMatchObject({ workflow_id: 'wf-cli-dag', total_nodes: 3, depth: 2, truncated: false });
    expect(dag.edges).toHaveLength(2);
    const byTarget = Object.fromEntries(dag.nodes.map((node: any) => [node.target, node]));
    expect(byTarget['dag-writer.review'].error).toContain('reviewer quota exceeded');
    expect(byTarget['dag-writer.draft'].error).toBeNull();
  });

  it('an unknown workflow exits 1 with the problem; a missing id is bad usage', async () => {
    const unknown = await session.cli(['dag', 'wf-nothing-here']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      'error: Not found (404): No execution belongs to workflow "wf-nothing-here".',
    );
    expect((await session.cli(['dag'])).code).toBe(2);
  });
});

describe('content/reference/cli-dag.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage('content/reference/cli-dag.md', session.env, 1);
  });
});
