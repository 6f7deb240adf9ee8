import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { docsRoot } from '../../src/lib/content-dir.ts';

export interface BuildResult {
  code: number | null;
  output: string;
  outDir: string;
}

/** Runs the real `astro build` on another corpus, into a temporary output directory. */
export function buildSite(contentDirectory: string): Promise<BuildResult> {
  // Inside node_modules: the prerender step imports the built server bundle, which must resolve the
  // app's packages from where it is written.
  const scratch = path.join(docsRoot, 'node_modules', '.cache');
  mkdirSync(scratch, { recursive: true });
  const outDir = mkdtempSync(path.join(scratch, 'switchyard-docs-out-'));
  const bin = path.join(
    path.dirname(createRequire(import.meta.url).resolve('astro/package.json')),
    'astro.js',
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'build', '--outDir', outDir], {
      cwd: docsRoot,
      env: { ...process.env, DOCS_CONTENT_DIR: contentDirectory, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output, outDir }));
  });
}

/** Writes a corpus of `relative path → file text` into a fresh temporary directory. */
export function writeCorpus(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-docs-content-'));
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(dir, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return dir;
}

/** A page with valid frontmatter. */
export function page(title: string, body: string, category = 'Concepts', order = 1): string {
  return `---\ntitle: ${title}\ndescription: About ${title.toLowerCase()}.\ncategory: ${category}\nkeywords: [${title.toLowerCase()}]\norder: ${order}\n---\n\n${body}\n`;
}
