/**
 * The log on stdout as a supervisor or a log shipper reads it: every line, in the order it was
 * logged, ending with `stopped`, even when the reader lags behind and the process exits right
 * after its last line, as the server does once a shutdown is over.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const APP = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/log-burst.ts', import.meta.url));

it('writes every line, in order, with `stopped` last, to a reader that lags', async () => {
  const count = 5_000;
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, String(count)], {
    cwd: APP,
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  // Nothing is read for a second: the pipe fills (about 64 KB) long before the half megabyte of
  // lines is out, so the process has to wait on its reader, and would exit meanwhile if it did not.
  await new Promise((resume) => setTimeout(resume, 1_000));
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  expect(await exited).toBe(0);
  expect(stderr).toBe('');
  const lines = stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; i?: number });
  expect(lines).toHaveLength(count + 1);
  expect(lines.slice(0, count).every((line, i) => line.msg === 'line' && line.i === i)).toBe(true);
  expect(lines.at(-1)?.msg).toBe('stopped');
});
