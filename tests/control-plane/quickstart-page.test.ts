/**
 * The quick start (content/getting-started/quickstart.md) shows what runs. Its `curl` commands to
 * the control plane are run in a real shell against a control-plane process on a fresh database,
 * as right after `npm start`, and each answer must have the shape of the ```json block the page
 * shows after it (tests/support/page-commands.ts: the same keys and values, except timestamps and
 * measured durations). `http://127.0.0.1:8080` becomes the server under test; nothing else is
 * substituted. The commands that start or build things (`npm start`, `npm test`) are not run
 * here: tests/scripts/start.test.ts runs what `npm start` runs.
 *
 * Needs `curl` and `bash` on PATH.
 */
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
const PAGE = 'content/getting-started/quickstart.md';
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
/** The page's commands to the control plane: raise the count when one is added (and runs here). */
const CONTROL_PLANE_COMMANDS = 2;

let server: ControlPlaneProcess;
let database: ThrowawayDatabase;
let workDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'sy-quickstart-'));
  database = await throwawayDatabase('sy_quickstart');
  server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url });
});

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the quick start (content/getting-started/quickstart.md)', () => {
  const examples = commandExamples(readFileSync(join(ROOT, PAGE), 'utf8')).filter(
    (example) =>
      example.command.code.trim().startsWith(`curl ${PAGE_CONTROL_PLANE}/`) ||
      example.command.code.trim().startsWith(`curl '${PAGE_CONTROL_PLANE}/`),
  );

  it(`has ${CONTROL_PLANE_COMMANDS} commands to the control plane, each followed by the answer it gives`, () => {
    expect(examples).toHaveLength(CONTROL_PLANE_COMMANDS);
    expect(examples.filter((e) => e.shown?.lang !== 'json').map((e) => `${PAGE}:${e.command.line}`)).toEqual(
      [],
    );
  });

  it('gets the answers the page shows from a control plane just started', async () => {
    const runner = createPageRunner({
      page: PAGE,
      cwd: workDir,
      localize: (text) => text.split(PAGE_CONTROL_PLANE).join(server.url),
      measured: new Set(['response_time']),
      // A fresh control plane answers at once; a read repeated until it matches would hide a
      // health answer that changes within seconds of the start.
      readRetryMs: 0,
    });
    const problems = await runner.runAll(examples, new IdMap());
    expect(problems, server.output()).toEqual([]);
  }, 60_000);
});
