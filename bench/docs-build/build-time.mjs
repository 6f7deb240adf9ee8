#!/usr/bin/env node
// Measures how long the documentation site takes to build: once for the real corpus (content/) and
// once for a generated 1,000-page corpus, each into a temporary output directory so a running site
// is never disturbed. Usage: node bench/docs-build/build-time.mjs [--pages 1000] [--skip-real] [--log file]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const docsApp = path.join(root, 'apps/docs');
const astroBin = path.join(root, 'node_modules/astro/astro.js');

const args = process.argv.slice(2);
const pageCount = Number(args[args.indexOf('--pages') + 1]) || 1000;
const skipReal = args.includes('--skip-real');
const logFile = args.includes('--log') ? args[args.indexOf('--log') + 1] : undefined;

const CATEGORIES = [
  ['getting-started', 'Getting started'],
  ['concepts', 'Concepts'],
  ['api-reference', 'API reference'],
  ['operations', 'Operations'],
  ['reference', 'Reference'],
];
const WORDS =
  'agent node reasoner skill target execution workflow memory vector approval webhook signature event stream discovery lifecycle presence version traffic weight configuration connector metric replica queue lease heartbeat'.split(
    ' ',
  );

/** Deterministic filler so every run builds the same corpus. */
function words(seed, count) {
  const out = [];
  for (let i = 0; i < count; i++) out.push(WORDS[(seed * 31 + i * 17) % WORDS.length]);
  return out.join(' ');
}

/** A page shaped like the real ones: sections, a list, a table, code, and links to other pages. */
function generatedPage(i, slugs) {
  const [, category] = CATEGORIES[i % CATEGORIES.length];
  const next = slugs[(i + 1) % slugs.length];
  const sections = [1, 2, 3, 4].map(
    (s) => `## Section ${s}

${words(i + s, 60)}. See [the next page](/docs/${next}#section-${s}) and [this section](#section-${s}).

### Details ${s}

- ${words(i + s + 1, 8)}
- ${words(i + s + 2, 8)}

| Field | Meaning |
|---|---|
| \`field_${s}\` | ${words(i + s + 3, 6)} |

\`\`\`ts
const response = await fetch('/api/v1/search?q=${WORDS[(i + s) % WORDS.length]}');
console.log(response.status, await response.json());
\`\`\``,
  );
  return `---
title: Generated page ${i}
description: Page ${i} of the generated benchmark corpus (${category}).
category: ${category}
keywords: [${WORDS[i % WORDS.length]}, benchmark]
order: ${i}
---

${words(i, 40)}.

${sections.join('\n\n')}
`;
}

function generateCorpus(count) {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-content-'));
  const slugs = Array.from({ length: count }, (_, i) => `${CATEGORIES[i % CATEGORIES.length][0]}/page-${i}`);
  slugs.forEach((slug, i) => {
    const file = path.join(dir, `${slug}.md`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, generatedPage(i, slugs));
  });
  return dir;
}

function countPages(dir) {
  return readdirSync(dir, { recursive: true }).filter((name) => String(name).endsWith('.md')).length;
}

function build(label, contentDir) {
  // Inside node_modules: the prerender step imports the built server bundle, which must resolve the
  // app's packages from its location; node_modules is also ignored by git.
  const scratch = path.join(docsApp, 'node_modules/.cache');
  mkdirSync(scratch, { recursive: true });
  const outDir = mkdtempSync(path.join(scratch, 'switchyard-bench-out-'));
  const env = { ...process.env, NO_COLOR: '1' };
  if (contentDir) env.DOCS_CONTENT_DIR = contentDir;
  else delete env.DOCS_CONTENT_DIR;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [astroBin, 'build', '--outDir', outDir], { cwd: docsApp, env });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      rmSync(outDir, { recursive: true, force: true });
      if (logFile) writeFileSync(logFile, output);
      if (code !== 0) {
        reject(new Error(`${label} build failed (exit ${code}):\n${output.slice(-3000)}`));
        return;
      }
      const pagefind = /Pagefind indexed (\d+) pages in (\d+) ms/.exec(output);
      resolve({ label, seconds, pagefindMs: pagefind ? Number(pagefind[2]) : undefined });
    });
  });
}

const results = [];
if (!skipReal) {
  const pages = countPages(path.join(root, 'content'));
  results.push({ ...(await build('real corpus', undefined)), pages });
}
const corpus = generateCorpus(pageCount);
try {
  results.push({ ...(await build(`generated corpus`, corpus)), pages: pageCount });
} finally {
  rmSync(corpus, { recursive: true, force: true });
}

console.log(
  `\nDocs build time (Node ${process.version}, ${cpus().length} cores, ${cpus()[0]?.model ?? 'cpu'})\n`,
);
console.log('| corpus | pages | build (s) | ms per page | of which Pagefind (s) |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  const perPage = ((r.seconds * 1000) / Math.max(r.pages, 1)).toFixed(1);
  const pagefind = r.pagefindMs === undefined ? 'n/a' : (r.pagefindMs / 1000).toFixed(2);
  console.log(`| ${r.label} | ${r.pages} | ${r.seconds.toFixed(1)} | ${perPage} | ${pagefind} |`);
}
