import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuildResult, buildSite, page, writeCorpus } from './support/run-build.ts';

// Two real builds, started together: each fails in the content check before rendering anything.
const dirs: string[] = [];
let missingFrontmatter: BuildResult;
let brokenLink: BuildResult;

beforeAll(async () => {
  const withoutFrontmatter = writeCorpus({
    'concepts/nodes.md': page('Nodes', '## Registering\n\nText.'),
    'concepts/untitled.md': '# Untitled\n\nThis page forgot its frontmatter.\n',
    'concepts/half.md': '---\ntitle: Half\ncategory: Elsewhere\norder: 1.5\n---\n\nBody.\n',
  });
  const withBrokenLink = writeCorpus({
    'concepts/nodes.md': page('Nodes', '## Registering\n\nSee [targets](/docs/concepts/targets).'),
    'concepts/memory.md': page(
      'Memory',
      '## Scopes\n\nSee [registering](/docs/concepts/nodes#registration).\n\n| Scope | Lifetime |\n|---|---|\n| workflow | the run | extra |',
      'Concepts',
      2,
    ),
  });
  dirs.push(withoutFrontmatter, withBrokenLink);
  [missingFrontmatter, brokenLink] = await Promise.all([
    buildSite(withoutFrontmatter),
    buildSite(withBrokenLink),
  ]);
  dirs.push(missingFrontmatter.outDir, brokenLink.outDir);
});

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('astro build content checks', () => {
  it('fails for a page without frontmatter, naming the file', () => {
    expect(missingFrontmatter.code).not.toBe(0);
    expect(missingFrontmatter.output).toMatch(/concepts\/untitled\.md:1: missing frontmatter/);
  });

  it('fails for frontmatter with missing or invalid fields, naming each field', () => {
    expect(missingFrontmatter.output).toMatch(/concepts\/half\.md:1: frontmatter "description"/);
    expect(missingFrontmatter.output).toMatch(
      /concepts\/half\.md:1: frontmatter "category".*one of: Getting started/,
    );
    expect(missingFrontmatter.output).toMatch(/concepts\/half\.md:1: frontmatter "keywords"/);
    expect(missingFrontmatter.output).toMatch(/concepts\/half\.md:1: frontmatter "order"/);
    expect(missingFrontmatter.output).not.toMatch(/concepts\/nodes\.md/);
  });

  it('fails for a link to a missing page and to a missing heading, naming file and line', () => {
    expect(brokenLink.code).not.toBe(0);
    expect(brokenLink.output).toMatch(
      /concepts\/nodes\.md:11: broken link "\/docs\/concepts\/targets": no page \/docs\/concepts\/targets/,
    );
    expect(brokenLink.output).toMatch(
      /concepts\/memory\.md:11: broken link "\/docs\/concepts\/nodes#registration": \/docs\/concepts\/nodes has no heading with id "registration"/,
    );
    expect(brokenLink.output).toContain('Content check failed with 3 problem(s)');
  });

  it('fails for a table row with more cells than its header, naming file and line', () => {
    expect(brokenLink.output).toMatch(/concepts\/memory\.md:15: table row has 3 cells but the header has 2/);
  });
});
