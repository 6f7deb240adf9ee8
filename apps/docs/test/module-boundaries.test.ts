import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { docsRoot } from '../src/lib/content-dir.ts';

/** The Astro build (`src/`), the front server (`server/`) and what both agree on (`contract/`). */
type Part = 'src' | 'server' | 'contract';

/**
 * The one module of the server the Astro build may import: the shares feature renders its
 * permalink page through an Astro route, and this module is the page's view of a share.
 */
const SHARE_PAGE_VIEW = 'server/shares/run-share-view.ts';

function sourceFiles(part: Part): string[] {
  return readdirSync(path.join(docsRoot, part), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|astro)$/.test(entry.name))
    .map((entry) =>
      path.relative(docsRoot, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'),
    );
}

/** The relative imports of a module, read by TypeScript's own pre-processor (the frontmatter of .astro files). */
function relativeImports(file: string): string[] {
  let text = readFileSync(path.join(docsRoot, file), 'utf8');
  if (file.endsWith('.astro')) text = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1] ?? '';
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.posix.normalize(path.posix.join(path.posix.dirname(file), name)));
}

function importsBetween(from: Part, to: Part): string[] {
  return sourceFiles(from).flatMap((file) =>
    relativeImports(file)
      .filter((target) => target.startsWith(`${to}/`))
      .map((target) => `${file} → ${target}`),
  );
}

describe('module boundaries of the docs app', () => {
  it('finds the modules it checks', () => {
    for (const part of ['src', 'server', 'contract'] as const) {
      expect(sourceFiles(part).length, part).toBeGreaterThan(0);
    }
    expect(relativeImports('src/lib/openapi.ts')).toContain('contract/site-contract.ts');
  });

  it('keeps the server free of imports from the Astro build', () => {
    expect(importsBetween('server', 'src')).toEqual([]);
  });

  it('lets the Astro build reach the server only through the share page view', () => {
    const imports = importsBetween('src', 'server').filter((edge) => !edge.endsWith(`→ ${SHARE_PAGE_VIEW}`));
    expect(imports).toEqual([]);
  });

  it('keeps the contract neutral: it imports neither half', () => {
    expect([...importsBetween('contract', 'src'), ...importsBetween('contract', 'server')]).toEqual([]);
  });
});
