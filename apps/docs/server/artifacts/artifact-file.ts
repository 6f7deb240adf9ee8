import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { ProblemError } from '@switchyard/shared';

/**
 * A generated file the server derives something from (the search index, the manifest, a page's
 * markdown). `get()` stats the file on every call (a few microseconds) and rebuilds the derived
 * value only when the file's identity changed, so a redeploy is picked up without a restart and
 * the hot path stays one stat. A missing or unusable file is a 502 `upstream_unavailable`; the
 * failure is remembered for that file version, so a garbled file is not re-parsed per request,
 * and the next version of the file is tried afresh.
 */
export interface ArtifactFile<T> {
  get(): T;
}

type Loaded<T> = { key: string; value: T } | { key: string; error: string };

export function artifactFile<T>(
  filePath: string,
  derive: (text: string) => T,
  options: { describe?: string; onError?: (message: string) => void } = {},
): ArtifactFile<T> {
  const describe = options.describe ?? basename(filePath);
  let loaded: Loaded<T> | undefined;
  return {
    get() {
      let key: string;
      try {
        const stats = statSync(filePath);
        if (!stats.isFile()) throw new Error('not a file');
        key = `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
      } catch {
        loaded = undefined;
        throw new ProblemError(
          'upstream_unavailable',
          `The generated ${describe} is missing on this server.`,
          {
            resolution: 'Retry shortly; if it persists, the site build is incomplete and must be rebuilt.',
          },
        );
      }
      if (loaded?.key !== key) {
        try {
          loaded = { key, value: derive(readFileSync(filePath, 'utf8')) };
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          loaded = { key, error: reason.length > 300 ? `${reason.slice(0, 300)}…` : reason };
          options.onError?.(`${describe} (${filePath}) could not be loaded: ${loaded.error}`);
        }
      }
      if ('error' in loaded) {
        throw new ProblemError('upstream_unavailable', `The generated ${describe} could not be loaded.`, {
          resolution: 'Retry shortly; if it persists, the site build is broken and must be rebuilt.',
        });
      }
      return loaded.value;
    },
  };
}
