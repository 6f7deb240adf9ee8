import { readFileSync } from 'node:fs';

/** The control plane's version, as its package.json states it. */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
