import { ApiProblem } from '@switchyard/client';
import type { Colours } from './colours.ts';

/** Exit statuses: 0 done, 1 the API answered a problem or the call failed, 2 the command line was wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** The command line itself is wrong (a missing argument, a value that cannot be parsed): exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The command ran and what it asked for did not happen (a call that failed, a check that did not
 * pass): exit 1 with `message` on stderr, and `resolution` (what to do) under it when known.
 */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
  constructor(
    message: string,
    readonly resolution?: string,
  ) {
    super(message);
  }
}

/**
 * The lines to print on stderr for a failure. A problem the API answered shows its title, status,
 * detail and resolution; a server that could not be reached is named with what to do about it.
 */
export function describeFailure(error: unknown, c: Colours, baseUrl: string | undefined): string[] {
  if (error instanceof ApiProblem) {
    if (error.status === 0) {
      return [
        `${c.red('error:')} ${error.detail}`,
        `${c.dim('fix:')} is the control plane running at ${baseUrl ?? 'that address'}? Start it (npm start in the checkout), or point the CLI at it with --url, SWITCHYARD_URL or \`switchyard config set url <url>\`.`,
      ];
    }
    const lines = [`${c.red('error:')} ${error.title} (${error.status}): ${error.detail}`];
    if (error.resolution) lines.push(`${c.dim('fix:')} ${error.resolution}`);
    return lines;
  }
  if (error instanceof CommandFailed) {
    const lines = [`${c.red('error:')} ${error.message}`];
    if (error.resolution) lines.push(`${c.dim('fix:')} ${error.resolution}`);
    return lines;
  }
  if (error instanceof UsageError) return [`${c.red('error:')} ${error.message}`];
  if (error instanceof Error) return [`${c.red('error:')} ${error.message}`];
  return [`${c.red('error:')} ${String(error)}`];
}

/** The exit status for a failure. */
export function exitCodeOf(error: unknown): number {
  return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILED;
}
