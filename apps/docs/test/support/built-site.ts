import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { listMarkdownFiles } from '../../src/lib/content-check.ts';
import { contentDir, docsRoot } from '../../src/lib/content-dir.ts';

/** The static output of the last `npm run build` (tests run after it, see turbo.json). */
export const clientDir = path.join(docsRoot, 'dist', 'client');

export function assertBuilt(): void {
  if (!existsSync(path.join(clientDir, 'index.html'))) {
    throw new Error(`No build at ${clientDir}: run \`npm run build -w @switchyard/docs\` before the tests.`);
  }
}

export function readBuilt(sitePath: string): string {
  return readFileSync(path.join(clientDir, sitePath), 'utf8');
}

export function builtExists(sitePath: string): boolean {
  return existsSync(path.join(clientDir, sitePath));
}

/** The corpus the build was made from: slug and raw source of every page below content/. */
export function sourcePages(): { slug: string; source: string }[] {
  const dir = contentDir();
  return listMarkdownFiles(dir).map((file) => ({
    slug: file.replace(/\.md$/, ''),
    source: readFileSync(path.join(dir, file), 'utf8'),
  }));
}
