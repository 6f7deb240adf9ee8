import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ProblemError } from '@switchyard/shared';

/**
 * A generated file the server derives something from (the search index, the manifest, a page's
 * markdown). The build does not change while the server runs (a deploy restarts the server), so
 * `get()` reads and derives the value on first use and keeps it: no file-system call per request.
 * A missing or unusable file is a 502 `upstream_unavailable`, logged once and kept as it is, so a
 * garbled file is not re-read per request; the server serves everything else meanwhile.
 */
export interface ArtifactFile<T> {
  get(): T;
}

type Loaded<T> = { value: T } | { missing: true } | { error: string };

export function artifactFile<T>(
  filePath: string,
  derive: (text: string) => T,
  options: { describe?: string; onError?: (message: string) => void } = {},
): ArtifactFile<T> {
  const describe = options.describe ?? basename(filePath);
  let loaded: Loaded<T> | undefined;

  function load(): Loaded<T> {
    let text: string;
    try {
      text = readFileSync(filePath, 'utf8');
    } catch {
      options.onError?.(`${describe} (${filePath}) is missing`);
      return { missing: true };
    }
    try {
      return { value: derive(text) };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const short = reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
      options.onError?.(`${describe} (${filePath}) could not be loaded: ${short}`);
      return { error: short };
    }
  }

  return {
    get() {
      loaded ??= load();
      if ('value' in loaded) return loaded.value;
      if ('missing' in loaded) {
        throw new ProblemError(
          'upstream_unavailable',
          `The generated ${describe} is missing on this server.`,
          {
            resolution:
              'The site build on this server is incomplete; retry later, after it has been rebuilt.',
          },
        );
      }
      throw new ProblemError('upstream_unavailable', `The generated ${describe} could not be loaded.`, {
        resolution: 'The site build on this server is broken; retry later, after it has been rebuilt.',
      });
    },
  };
}
