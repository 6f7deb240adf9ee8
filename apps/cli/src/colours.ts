import pc from 'picocolors';

export type Colours = ReturnType<typeof pc.createColors>;

/**
 * Whether to colour what goes to a stream: FORCE_COLOR (any value but `0` or `false`) turns
 * colour on and wins; NO_COLOR (any non-empty value) turns it off; otherwise colour only when
 * the stream is a terminal, so pipes and files get plain text.
 */
export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true;
}

export function coloursFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Colours {
  return pc.createColors(colourEnabled(stream, env));
}

/** The colour of a status word: green when it went well, red when not, yellow while under way. */
export function statusColour(c: Colours, status: string): string {
  if (['succeeded', 'ready', 'approved', 'ok', 'active', 'healthy', 'delivered'].includes(status)) {
    return c.green(status);
  }
  if (['failed', 'timeout', 'offline', 'rejected', 'expired', 'error', 'dead'].includes(status)) {
    return c.red(status);
  }
  if (['cancelled'].includes(status)) return c.dim(status);
  return c.yellow(status);
}
