/**
 * The memory pages show what runs. Each page's ```bash blocks are run in a real shell,
 * in page order, against a control-plane process of its own (a fresh database, as a reader who
 * just started one), and each answer must have the shape of the ```json block the page shows
 * after the command (tests/support/page-commands.ts: same keys and values, except timestamps and
 * ids, which are paired). A `curl -N` stream keeps running while the commands after it run, and
 * must print the events the page shows.
 *
 * Substituted: `http://127.0.0.1:8080`, the control plane's default address, becomes the server
 * under test. Nothing else is.
 *
 * A section shown against a control plane started with other settings (SECTIONS) runs against a
 * server of its own started with them; the rest of its page runs against the default one.
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
import { commandExamples, IdMap } from '../support/doc-examples.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';

/** The pages, each with how many commands it shows (a new one must be runnable: raise it then). */
const PAGES = {
  'content/concepts/memory.md': 3,
  'content/concepts/vector-memory.md': 2,
  'content/api/memory.md': 14,
} as const;

/** Sections whose commands the page shows against a control plane started with these settings. */
const SECTIONS = [
  {
    page: 'content/concepts/vector-memory.md',
    heading: '## Agents built with the SDKs',
    commands: 2,
    env: { SWITCHYARD_MEMORY_VECTOR_SEARCH_RESPONSE: 'array' },
  },
] as const;

/**
 * The markdown of one section (from its heading to the next `## `) and of the rest of the page,
 * each with the other's lines left blank, so the runner's line numbers are the page's.
 */
function splitSection(markdown: string, heading: string): { inside: string; outside: string } {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`no section "${heading}"`);
  let end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  if (end < 0) end = lines.length;
  const keep = (inSection: boolean) =>
    lines.map((line, i) => ((i >= start && i < end) === inSection ? line : '')).join('\n');
  return { inside: keep(true), outside: keep(false) };
}

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error('the memory pages use curl, which is not on PATH: install it (apt-get install curl)');
  }
});

function describeRun(
  title: string,
  page: string,
  markdown: string,
  commands: number,
  env?: Record<string, string>,
) {
  describe(title, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let workDir: string;
    const localize = (text: string) => text.split(PAGE_CONTROL_PLANE).join(server.url);
    const runner = createPageRunner({ page, cwd: ROOT, localize });
    const examples = commandExamples(markdown);

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-memory-pages-'));
      database = await throwawayDatabase('sy_memory_pages');
      server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url, env });
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
      const problems = await runner.runAll(examples, new IdMap());
      expect(problems, `control plane:\n${server.output()}`).toEqual([]);
    }, 120_000);
  });
}

for (const [page, commands] of Object.entries(PAGES)) {
  let markdown = readFileSync(join(ROOT, page), 'utf8');
  for (const section of SECTIONS.filter((s) => s.page === page)) {
    markdown = splitSection(markdown, section.heading).outside;
  }
  describeRun(page, page, markdown, commands);
}

for (const section of SECTIONS) {
  const { inside } = splitSection(readFileSync(join(ROOT, section.page), 'utf8'), section.heading);
  const settings = Object.entries(section.env).map(([name, value]) => `${name}=${value}`);
  describeRun(
    `${section.page} "${section.heading.slice(3)}" (${settings.join(' ')})`,
    section.page,
    inside,
    section.commands,
    section.env,
  );
}
