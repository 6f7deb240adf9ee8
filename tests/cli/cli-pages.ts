import { expect } from 'vitest';
import { normalizeOutput, type PageCommandResult, runPageCommands } from '../support/cli.ts';

/**
 * Runs every command of a CLI docs page against the session and holds each to the page: it must
 * exit 0 unless the page says otherwise (a ```text block with a line starting `error:` shows a failure,
 * exit 1), and print what the ```text block after it shows, ages, durations, ids and ports aside.
 * Answers the results, for further checks.
 */
export async function checkCliPage(
  page: string,
  env: Record<string, string>,
  expectedCommands: number,
  prepare?: (command: string) => string | Promise<string>,
  /** Replaces what differs on this machine (a path) in what a command printed with what the page shows. */
  localizeOutput: (text: string) => string = (text) => text,
): Promise<PageCommandResult[]> {
  const results = await runPageCommands(page, env, prepare);
  expect(results.length, `${page}: commands shown (a new one must be runnable: raise the count)`).toBe(
    expectedCommands,
  );
  for (const { line, command, result, shown } of results) {
    const where = `${page}:${line} \`${command}\`\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
    expect(result.code, where).toBe(shown !== undefined && /^error:/m.test(shown) ? 1 : 0);
    if (shown !== undefined) {
      const printed = localizeOutput(`${result.stdout}${result.stderr}`);
      expect(normalizeOutput(printed), where).toBe(normalizeOutput(shown));
    }
  }
  return results;
}
