import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@switchyard/docs/server/http/logger.ts';
import {
  type DocsServerOptions,
  type RunningDocsServer,
  startDocsServer,
} from '@switchyard/docs/server/server.ts';
import { openTestDatabase } from '@switchyard/shared/db';
import { inject } from 'vitest';

/** The docs site's build, as its `npm start` serves it. */
export const DOCS_DIST = fileURLToPath(new URL('../../apps/docs/dist', import.meta.url));

export interface TestDocsServer {
  /** Where it listens, e.g. http://127.0.0.1:41234. */
  url: string;
  server: RunningDocsServer;
  /** The error lines it logged (parsed JSON): a test that expects none asserts this is empty. */
  errors: unknown[];
  /** Closes the server and drops its database. */
  close(): Promise<void>;
}

/**
 * The real docs front server over the real build (or `distDir`, the build of a fixture corpus), in
 * this process, with a database of its own (a copy of the run's migrated docs template;
 * global-setup.ts) and its error lines collected.
 */
export async function startTestDocsServer(
  options: Omit<DocsServerOptions, 'db' | 'logger'> = {},
): Promise<TestDocsServer> {
  const distDir = options.distDir ?? DOCS_DIST;
  if (!existsSync(join(distDir, 'server', 'entry.mjs'))) {
    throw new Error(`No docs build at ${distDir}: run \`npm run build -w @switchyard/docs\` first.`);
  }
  const database = await openTestDatabase({ template: inject('docsTemplate') });
  const errors: unknown[] = [];
  try {
    const server = await startDocsServer({
      port: 0,
      host: '127.0.0.1',
      ...options,
      distDir,
      db: database.db,
      logger: createLogger('error', { write: (line: string) => void errors.push(JSON.parse(line)) }),
    });
    return {
      url: server.url,
      server,
      errors,
      async close() {
        await server.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
