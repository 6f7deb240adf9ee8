import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type CommandExample, commandExamples, runShell, type ShellResult } from './doc-examples.ts';

/** The repository root, where a reader runs a page's commands. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The control plane's build, as the operations pages start it. */
export const SERVER_JS = 'apps/control-plane/dist/server.js';

/** A page of content/operations and its shell commands, in page order. */
export function operationsPage(name: string): { page: string; markdown: string; examples: CommandExample[] } {
  const page = `content/operations/${name}`;
  const markdown = readFileSync(`${ROOT}${page}`, 'utf8');
  return { page, markdown, examples: commandExamples(markdown) };
}

/** `page:line` of a command, for messages that point at the page. */
export function whereOf(page: string, example: CommandExample): string {
  return `${page}:${example.command.line}`;
}

/**
 * The libpq environment (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) for a PostgreSQL URL: the
 * pages' `psql`, `createdb` and `pg_restore` commands that name no URL use the administrator's
 * connection, as a reader's shell would have it set.
 */
export function libpqEnv(url: string): Record<string, string> {
  const parsed = new URL(url);
  return {
    PGHOST: parsed.hostname,
    PGPORT: parsed.port || '5432',
    PGUSER: decodeURIComponent(parsed.username) || 'postgres',
    ...(parsed.password ? { PGPASSWORD: decodeURIComponent(parsed.password) } : {}),
    PGDATABASE: parsed.pathname.slice(1) || 'postgres',
  };
}

/** The same PostgreSQL server with another database name. */
export function withDatabase(url: string, database: string): string {
  const target = new URL(url);
  target.pathname = `/${database}`;
  return target.toString();
}

export interface PageCommandOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Applied to the command before it runs (addresses and names of this run). */
  localize?: (text: string) => string;
  timeoutMs?: number;
}

/**
 * Runs one command of a page in bash as a reader would; throws, quoting its output, when it exits
 * non-zero. When the page follows it with a ```text block, its stdout must be exactly that text
 * (after `localize`, trailing blank lines aside), else it throws saying where.
 */
export async function runPageCommand(
  page: string,
  example: CommandExample,
  options: PageCommandOptions = {},
): Promise<ShellResult> {
  const localize = options.localize ?? ((text: string) => text);
  const command = localize(example.command.code);
  const result = await runShell(command, {
    cwd: options.cwd ?? ROOT,
    env: options.env,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  if (result.code !== 0) {
    throw new Error(
      `${whereOf(page, example)} \`${command}\` exited with ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  if (example.shown?.lang === 'text') {
    // Trailing blank lines are not compared: a page's block cannot show them (promtool ends with one).
    const expected = localize(example.shown.code).trimEnd();
    if (result.stdout.trimEnd() !== expected) {
      throw new Error(
        `${whereOf(page, example)} \`${command}\` printed\n${result.stdout}\nbut the page shows\n${expected}`,
      );
    }
  }
  return result;
}
