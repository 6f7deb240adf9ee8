/**
 * The clients page (content/getting-started/clients.md) shows what runs, against a real
 * control-plane server with an API key and the first-agent example ready as `hello-agent`
 * (tests/support/hello-agent-server.ts):
 * - the curl command answers the JSON the page shows (ids paired, times and durations free);
 * - `call.mjs` runs with `node` and `call.py` with `python3` as written, each printing exactly the
 *   ```text block the page shows after it: a result, then a problem document read by its code.
 * Substituted: the page's `http://127.0.0.1:8080` becomes the server under test, through
 * SWITCHYARD_URL for the scripts (which they read) and in the curl command's text.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToEnd } from '../support/child-process.ts';
import { fencedBlocks, IdMap, shapeDifferences } from '../support/doc-examples.ts';
import { type HelloAgentServer, startHelloAgentServer } from '../support/hello-agent-server.ts';
import { ensurePython, PYTHON_INSTALL_TIMEOUT_MS } from '../support/python.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = 'content/getting-started/clients.md';
const PAGE_URL = 'http://127.0.0.1:8080';
const KEY = 'clients-page-key-3e9a';

const blocks = fencedBlocks(readFileSync(join(ROOT, PAGE), 'utf8'));
let running: HelloAgentServer;
let python: string;
let workDir: string;

/** The first block of `lang` after the ```bash block whose code is `command`. */
function after(command: string, lang: string) {
  const at = blocks.findIndex((b) => b.lang === 'bash' && b.code.trim() === command);
  expect(at, `the page runs \`${command}\``).toBeGreaterThanOrEqual(0);
  const shown = blocks.slice(at + 1).find((b) => b.lang === lang);
  expect(shown, `the page shows what \`${command}\` prints`).toBeDefined();
  return shown!;
}

/** Writes the page's `lang` block as `file` and runs it with `interpreter`, as the reader would. */
async function runScript(lang: string, file: string, interpreter: string) {
  const script = blocks.find((b) => b.lang === lang);
  expect(script, `the page has a ${lang} script`).toBeDefined();
  writeFileSync(join(workDir, file), script!.code);
  return runToEnd(interpreter, [file], {
    cwd: workDir,
    env: { PATH: process.env.PATH, SWITCHYARD_URL: running.url, SERVICE_API_KEY: KEY },
  });
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'sy-clients-page-'));
  python = await ensurePython();
  running = await startHelloAgentServer('clients-page', KEY);
}, PYTHON_INSTALL_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await running?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe(PAGE, () => {
  it('answers the curl call with the JSON the page shows', async () => {
    const command = blocks.find((b) => b.lang === 'bash' && b.code.startsWith('curl'))!;
    const shown = blocks[blocks.indexOf(command) + 1]!;
    expect(shown.lang).toBe('json');
    const result = await runToEnd('bash', ['-c', command.code.split(PAGE_URL).join(running.url)], {
      env: { PATH: process.env.PATH, SERVICE_API_KEY: KEY },
    });
    expect(result.code, result.stderr).toBe(0);
    const rules = { measured: new Set(['duration_ms']), ids: new IdMap() };
    expect(shapeDifferences(JSON.parse(result.stdout), JSON.parse(shown.code), rules)).toEqual([]);
  });

  it('runs call.mjs with node and prints what the page shows', async () => {
    const result = await runScript('js', 'call.mjs', process.execPath);
    expect(result.stderr).toBe('');
    expect(result.stdout.trimEnd()).toBe(after('node call.mjs', 'text').code.trimEnd());
  });

  it('runs call.py with python3 and prints what the page shows', async () => {
    const result = await runScript('python', 'call.py', python);
    expect(result.stderr).toBe('');
    expect(result.stdout.trimEnd()).toBe(after('python3 call.py', 'text').code.trimEnd());
  });
});
