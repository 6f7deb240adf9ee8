import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPOSITORY_BRANCH, REPOSITORY_URL } from './build-info.ts';

/** Per directory: when each file directly in it was last committed, by file name. */
const directoryDates = new Map<string, Map<string, string>>();

function git(args: string[], cwd: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 10_000,
    // A directory's whole history of file names; the default 1 MiB would cut off a long one.
    maxBuffer: 64 * 1024 * 1024,
  }).trim();
}

/**
 * Where `dir` sits in its git checkout (`content/api/`, say; empty at the top), or undefined when
 * it has no whole history to date pages by: a shallow clone would date every page to its one
 * commit, and a tree without git (the docs image build) has no dates at all.
 */
function checkoutPrefix(dir: string): string | undefined {
  try {
    const [shallow, prefix = ''] = git(['rev-parse', '--is-shallow-repository', '--show-prefix'], dir).split(
      '\n',
    );
    return shallow === 'false' ? prefix : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When each file directly in `dir` was last committed, from one `git log` of the directory: one
 * process per directory rather than one per page (a corpus of a thousand pages in a dozen
 * directories asks git a dozen times). Newest commits come first, so the first commit that names
 * a file is its last change. A merge names the files it changed against every parent (a conflict
 * resolved, a file only the merge made), as `git log -1 -- <file>` counts merges.
 */
function commitDates(dir: string): Map<string, string> {
  let dates = directoryDates.get(dir);
  if (dates) return dates;
  dates = new Map();
  const prefix = checkoutPrefix(dir);
  if (prefix !== undefined) {
    try {
      // -z: file names exactly as they are, from the top of the checkout (a combined diff ignores
      // --relative); each commit starts with a record separator.
      const log = git(
        ['log', '--format=%x1e%cI', '--name-only', '--diff-merges=combined', '-z', '--', '.'],
        dir,
      );
      for (const commit of log.split('\x1e')) {
        const [date, ...files] = commit.split('\0');
        if (!date) continue;
        for (const entry of files) {
          const name = entry.replace(/^\n/, '');
          if (!name.startsWith(prefix)) continue;
          const inDir = name.slice(prefix.length);
          if (inDir && !inDir.includes('/') && !dates.has(inDir)) dates.set(inDir, date);
        }
      }
    } catch {
      dates.clear();
    }
  }
  directoryDates.set(dir, dates);
  return dates;
}

/**
 * When a page's markdown file was last committed (ISO 8601), or undefined without git history or
 * for a file never committed. `filePath` is the content entry's path, relative to the directory
 * the build runs in (Astro's project root). It never throws, so a build without git simply shows
 * no date.
 */
export function lastUpdated(filePath: string | undefined): string | undefined {
  if (!filePath) return undefined;
  const file = path.resolve(filePath);
  return commitDates(path.dirname(file)).get(path.basename(file));
}

/** Where the page's source can be edited on GitHub: `content/<slug>.md` on the main branch. */
export function editUrl(slug: string): string {
  const segments = ['content', ...`${slug}.md`.split('/')].map(encodeURIComponent);
  return `${REPOSITORY_URL}/edit/${REPOSITORY_BRANCH}/${segments.join('/')}`;
}
