/**
 * The reference pages (health and metrics, the OpenAPI document, discovery, versions) show what
 * runs. Each page's ```bash blocks are run in a real shell, in page order, against a
 * control-plane process of its own (a fresh database) with the first-agent example of the
 * repository, examples/first-agent/agent.mjs, registered and ready as `hello-agent` in the
 * versions the page assumes (the versions page starts it a second time with AGENT_VERSION=1.1.0,
 * as its canary rollout says). An answer shown as ```json must have its shape
 * (tests/support/page-commands.ts: same keys and values, except timestamps, measured numbers and
 * ids, which are paired); an output shown as ```text must be printed exactly.
 *
 * Substituted: `http://127.0.0.1:8080`, the control plane's default address, becomes the server
 * under test, `http://127.0.0.1:8001` and `:8011` the agents of versions 1.0.0 and 1.1.0, and
 * `$SERVICE_CONNECTOR_TOKEN` the token the server was started with. Nothing else is.
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
import { type CommandExample, commandExamples, IdMap, runShell } from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
/** Where the pages run each version of hello-agent (the versions page starts 1.1.0 on 8011). */
const PAGE_AGENTS: Record<string, string> = {
  '1.0.0': 'http://127.0.0.1:8001',
  '1.1.0': 'http://127.0.0.1:8011',
};
const AGENT_SCRIPT = join(ROOT, 'examples/first-agent/agent.mjs');
const TOKEN = 'reference-pages-token-5f2a';
/** Numbers that are measurements: how long a check took. */
const MEASURED = new Set(['response_time', 'last_check_duration_ms']);

/**
 * The pages, each with how many commands it shows (a new one must be runnable: raise it then),
 * the versions of hello-agent its reader has running, and the settings its server has.
 */
const PAGES: Record<string, { commands: number; versions: string[]; env?: Record<string, string> }> = {
  'content/api/health-and-metrics.md': { commands: 2, versions: [] },
  'content/api/openapi.md': { commands: 1, versions: [] },
  'content/concepts/discovery.md': { commands: 1, versions: ['1.0.0'] },
  'content/concepts/versions.md': {
    commands: 1,
    versions: ['1.0.0', '1.1.0'],
    env: { SERVICE_CONNECTOR_TOKEN: TOKEN },
  },
};

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error('the reference pages use curl, which is not on PATH: install it (apt-get install curl)');
  }
});

for (const [page, { commands, versions, env }] of Object.entries(PAGES)) {
  describe(page, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let workDir: string;
    const agents: Array<{ version: string; url: string; process: RunningProcess }> = [];
    const localize = (text: string) => {
      let out = text.split(PAGE_CONTROL_PLANE).join(server.url).split('$SERVICE_CONNECTOR_TOKEN').join(TOKEN);
      for (const agent of agents) out = out.split(PAGE_AGENTS[agent.version]!).join(agent.url);
      return out;
    };
    const runner = createPageRunner({ page, cwd: ROOT, localize, measured: MEASURED });
    const examples = commandExamples(readFileSync(join(ROOT, page), 'utf8'));

    /** A `curl` whose output the page shows as ```text: it must print exactly that. */
    async function runPrinting(example: CommandExample, command: string): Promise<string[]> {
      const result = await runShell(localize(command), { cwd: ROOT, timeoutMs: 30_000 });
      const printed = result.stdout.trimEnd();
      const shown = localize(example.shown!.code).trimEnd();
      if (result.code !== 0)
        return [`${runner.where(example)}: exited with ${result.code}: ${result.stderr}`];
      return printed === shown
        ? []
        : [`${runner.where(example)}: it printed\n${printed}\nbut the page shows\n${shown}`];
    }

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-reference-pages-'));
      database = await throwawayDatabase('sy_reference_pages');
      server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url, env });
      for (const version of versions) {
        const port = await freePort();
        const started = startNode([AGENT_SCRIPT], {
          env: {
            PATH: process.env.PATH,
            CONTROL_PLANE_URL: server.url,
            AGENT_PORT: String(port),
            AGENT_VERSION: version,
          },
        });
        agents.push({ version, url: `http://127.0.0.1:${port}`, process: started });
        // It prints this once the control plane has taken its `ready`.
        await started.waitFor(/\[agent\] ready/, 30_000);
      }
      if (versions.length > 0) {
        // Probe them now, as the health monitor does soon after an instance appears, so the
        // health the pages show (checked, healthy) is there when they read it.
        const refreshed = await fetch(`${server.url}/api/v1/nodes/hello-agent/status/refresh`, {
          method: 'POST',
        });
        expect(refreshed.status).toBe(200);
      }
    });

    afterAll(async () => {
      await runner.stop();
      for (const agent of agents) await agent.process.stop();
      await server?.stop();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      expect(examples.filter((e) => !e.shown).map(runner.where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      const printing: string[] = [];
      const problems = await runner.runAll(examples, new IdMap(), async (example, command) => {
        if (
          example.shown?.lang !== 'text' ||
          !command.startsWith('curl ') ||
          command.startsWith('curl -N ')
        ) {
          return false;
        }
        printing.push(...(await runPrinting(example, command)));
        return true;
      });
      const output = agents.map((agent) => agent.process.output()).join('\n');
      expect([...printing, ...problems], `agents:\n${output}\ncontrol plane:\n${server.output()}`).toEqual(
        [],
      );
    }, 120_000);
  });
}
