import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPOSITORY_BRANCH, REPOSITORY_URL } from './build-info.ts';

const dates = new Map<string, string | undefined>();
const histories = new Map<string, boolean>();

function git(args: string[], cwd: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 10_000,
  }).trim();
}

/**
 * Whether `dir` sits in a git checkout with its whole history. A shallow clone would date every
 * page to its one commit, and a tree without git (the docs image build) has no dates at all.
 */
function hasHistory(dir: string): boolean {
  let known = histories.get(dir);
  if (known === undefined) {
    try {
      known = git(['rev-parse', '--is-shallow-repository'], dir) === 'false';
    } catch {
      known = false;
    }
    histories.set(dir, known);
  }
  return known;
}

/**
 * When a page's markdown file was last committed (ISO 8601), or undefined without git history or
 * for a file never committed. `filePath` is the content entry's path, relative to the directory
 * the build runs in (Astro's project root). Asked once per file and build; it never throws, so a
 * build without git simply shows no date.
 */
export function lastUpdated(filePath: string | undefined): string | undefined {
  if (!filePath) return undefined;
  const file = path.resolve(filePath);
  if (dates.has(file)) return dates.get(file);
  const dir = path.dirname(file);
  let date: string | undefined;
  if (hasHistory(dir)) {
    try {
      date = git(['log', '-1', '--format=%cI', '--', path.basename(file)], dir) || undefined;
    } catch {
      date = undefined;
    }
  }
  dates.set(file, date);
  return date;
}

/** Where the page's source can be edited on GitHub: `content/<slug>.md` on the main branch. */
export function editUrl(slug: string): string {
  const segments = ['content', ...`${slug}.md`.split('/')].map(encodeURIComponent);
  return `${REPOSITORY_URL}/edit/${REPOSITORY_BRANCH}/${segments.join('/')}`;
}
