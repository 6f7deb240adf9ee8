/**
 * The changelog (content/reference/changelog.md) names the version that is built: its newest
 * release is the version of every package of the repository and the one the control plane
 * reports, so a release cannot ship with a changelog that stops before it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlPlaneOpenApi } from '@switchyard/control-plane/openapi';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const changelog = readFileSync(join(ROOT, 'content/reference/changelog.md'), 'utf8');

/** Every workspace package's name and version. */
function packageVersions(): Array<[string, string]> {
  return ['apps', 'packages'].flatMap((group) =>
    readdirSync(join(ROOT, group)).map((dir) => {
      const manifest = JSON.parse(readFileSync(join(ROOT, group, dir, 'package.json'), 'utf8'));
      return [manifest.name as string, manifest.version as string] as [string, string];
    }),
  );
}

describe('content/reference/changelog.md', () => {
  const releases = [...changelog.matchAll(/^## (\d+\.\d+\.\d+)\b/gm)].map((match) => match[1]!);

  it('lists releases newest first', () => {
    expect(releases.length).toBeGreaterThan(0);
    const numeric = (v: string) => v.split('.').map(Number);
    const sorted = [...releases].sort((a, b) => {
      const [x, y] = [numeric(a), numeric(b)];
      return y[0]! - x[0]! || y[1]! - x[1]! || y[2]! - x[2]!;
    });
    expect(releases).toEqual(sorted);
  });

  it('starts with the version every package carries and the control plane reports', () => {
    const newest = releases[0];
    expect(packageVersions().filter(([, version]) => version !== newest)).toEqual([]);
    expect(controlPlaneOpenApi().info.version).toBe(newest);
  });
});
