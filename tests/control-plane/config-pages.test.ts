/**
 * The configuration pages show what runs. Each page's ```bash blocks are run in a real
 * shell, in page order, against a control-plane process of its own (a fresh database) started
 * with SERVICE_CONFIG_SOURCE=db, as the pages say, and each answer must have the shape of the
 * ```json block the page shows after the command (tests/support/page-commands.ts). A command
 * followed by a ```text block must print exactly that text. The 503 the API page shows for a
 * server reading its settings from the file is compared with a real one from such a server.
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
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import {
  type CommandExample,
  commandExamples,
  fencedBlocks,
  IdMap,
  runShell,
  shapeDifferences,
} from '../support/doc-examples.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';

/** The pages, each with how many commands it shows (a new one must be runnable: raise it then). */
const PAGES = {
  'content/concepts/configuration.md': 2,
  'content/api/configuration.md': 11,
} as const;

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'the configuration pages use curl, which is not on PATH: install it (apt-get install curl)',
    );
  }
});

for (const [page, commands] of Object.entries(PAGES)) {
  describe(page, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let workDir: string;
    const localize = (text: string) => text.split(PAGE_CONTROL_PLANE).join(server.url);
    const runner = createPageRunner({ page, cwd: ROOT, localize });
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    const examples = commandExamples(markdown);

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-config-pages-'));
      database = await throwawayDatabase('sy_config_pages');
      server = await startControlPlaneProcess({
        dir: workDir,
        databaseUrl: database.url,
        env: { SERVICE_CONFIG_SOURCE: 'db' },
      });
    });

    afterAll(async () => {
      await runner.stop();
      await server?.stop();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      expect(examples.filter((e) => !e.shown).map(runner.where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      // A command the page follows with a ```text block prints exactly that text (a raw config,
      // a status code).
      const printsText = async (example: CommandExample, command: string) => {
        if (example.shown?.lang !== 'text') return false;
        const result = await runShell(localize(command), { cwd: ROOT, timeoutMs: 30_000 });
        expect(result.code, `${runner.where(example)}: ${result.stderr}`).toBe(0);
        expect(result.stdout, runner.where(example)).toBe(`${example.shown.code.replace(/\n$/, '')}\n`);
        return true;
      };
      const problems = await runner.runAll(examples, new IdMap(), printsText);
      expect(problems, `control plane:\n${server.output()}`).toEqual([]);
    }, 120_000);

    if (page === 'content/api/configuration.md') {
      it('shows the 503 a server reading its settings from the file answers to a reload', async () => {
        const shown = fencedBlocks(markdown).find(
          (b) => b.lang === 'json' && b.code.includes('service_unavailable'),
        );
        expect(shown).toBeDefined();
        const fileDir = mkdtempSync(join(tmpdir(), 'sy-config-pages-file-'));
        const fileDatabase = await throwawayDatabase('sy_config_pages_file');
        const fileServer = await startControlPlaneProcess({ dir: fileDir, databaseUrl: fileDatabase.url });
        try {
          const response = await fetch(`${fileServer.url}/api/v1/configs/reload`, { method: 'POST' });
          expect(response.status).toBe(503);
          const problems = shapeDifferences(await response.json(), JSON.parse(shown!.code), {
            measured: new Set(),
            ids: new IdMap(),
          });
          expect(problems).toEqual([]);
        } finally {
          await fileServer.stop();
          await fileDatabase.drop();
          rmSync(fileDir, { recursive: true, force: true });
        }
      }, 120_000);
    }
  });
}
