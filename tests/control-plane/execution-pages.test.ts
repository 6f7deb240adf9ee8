/**
 * The execution pages show what runs. Each page's ```bash blocks are run in a real shell, in
 * page order, against a control-plane process of its own (a fresh database) with the first-agent
 * example of the repository, examples/first-agent/agent.mjs, registered and ready as
 * `hello-agent` (what a reader who followed the first-agent tutorial has running). Each answer
 * must have the shape of the ```json block the page shows after the command
 * (tests/support/page-commands.ts: same keys and values, except timestamps, measured durations
 * and ids, which are paired: a command naming a page id runs with the real id it was paired
 * with).
 *
 * Substituted: `http://127.0.0.1:8080`, the control plane's default address, becomes the server
 * under test. Nothing else is.
 *
 * Needs `curl` and `bash` on PATH.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { commandExamples, IdMap } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const AGENT_SCRIPT = join(ROOT, 'examples/first-agent/agent.mjs');
const MEASURED = new Set(['duration_ms']);

/** The pages, each with how many commands it shows (a new one must be runnable: raise it then). */
const PAGES = {
  'content/api/execution.md': 12,
  'content/api/workflows.md': 3,
  'content/concepts/targets.md': 2,
} as const;

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error('the execution pages use curl, which is not on PATH: install it (apt-get install curl)');
  }
});

for (const [page, commands] of Object.entries(PAGES)) {
  describe(page, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let agent: RunningProcess | undefined;
    let workDir: string;
    const localize = (text: string) => text.split(PAGE_CONTROL_PLANE).join(server.url);
    const runner = createPageRunner({ page, cwd: ROOT, localize, measured: MEASURED });
    const examples = commandExamples(readFileSync(join(ROOT, page), 'utf8'));

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-execution-pages-'));
      database = await throwawayDatabase('sy_execution_pages');
      server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url });
      const started = startNode([AGENT_SCRIPT], {
        env: { PATH: process.env.PATH, CONTROL_PLANE_URL: server.url, AGENT_PORT: String(await freePort()) },
      });
      agent = started;
      await eventually(
        'precondition: hello-agent turns ready',
        async () => {
          const response = await fetch(`${server.url}/api/v1/nodes/hello-agent`);
          const body = (await response.json()) as { lifecycle_status?: string };
          return response.status === 200 && body.lifecycle_status === 'ready' ? true : undefined;
        },
        () => `agent output:\n${started.output()}`,
      );
    });

    afterAll(async () => {
      await runner.stop();
      await agent?.stop();
      await server?.stop();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      expect(examples.filter((e) => !e.shown).map(runner.where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      const problems = await runner.runAll(examples, new IdMap());
      expect(problems, `agent:\n${agent?.output()}\ncontrol plane:\n${server.output()}`).toEqual([]);
    }, 120_000);
  });
}
