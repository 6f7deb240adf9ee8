import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the dashboard's build lands inside the repository (and the container image). */
const BUILD_DIR = join('apps', 'dashboard', 'dist');

/**
 * The dashboard build next to this control plane: the first ancestor of this file holding
 * apps/dashboard/dist. The same code runs from apps/control-plane/src (tsx, tests) and from the
 * bundle in apps/control-plane/dist (npm start, the image), so the path is found, not fixed.
 * Undefined when no build exists (the dashboard was never built).
 */
export function defaultDashboardDir(
  from: string = dirname(fileURLToPath(import.meta.url)),
): string | undefined {
  let dir = resolve(from);
  for (;;) {
    const candidate = join(dir, BUILD_DIR);
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
