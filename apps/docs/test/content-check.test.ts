import { readFileSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { checkContent } from '../src/lib/content-check.ts';
import { contentDir } from '../src/lib/content-dir.ts';
import { page, writeCorpus } from './support/run-build.ts';

const dirs: string[] = [];
function check(files: Record<string, string>) {
  const dir = writeCorpus(files);
  dirs.push(dir);
  return checkContent(dir).map(
    (problem) => `${problem.file.slice(dir.length + 1)}:${problem.line}: ${problem.message}`,
  );
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('checkContent', () => {
  it('reports an image the site does not have, and accepts one it has', () => {
    const problems = check({
      'a.md': page(
        'A',
        [
          '![there](/favicon.svg)',
          '',
          '![gone](/images/nope.png)',
          '',
          '![far](https://example.com/x.png)',
        ].join('\n'),
      ),
    });
    expect(problems).toEqual([
      'a.md:11: missing image "/images/nope.png": no file /images/nope.png in the site\'s public directory',
    ]);
  });

  it('accepts every link form that resolves on the built site', () => {
    const problems = check({
      'index.md': page('Home', '## Welcome\n\nHi.', 'Getting started'),
      'concepts/nodes.md': page(
        'Nodes',
        [
          '## Node lifecycle',
          '',
          '### Node lifecycle',
          '',
          '## `X-Service-Signature` header',
          '',
          '[same page](#node-lifecycle-1) [code heading](#x-service-signature-header)',
          '[other](/docs/reference/errors#not_found) [markdown](/docs/reference/errors.md)',
          '[relative](../reference/errors) [slash](/docs/reference/errors/) [home](/#welcome)',
          '[api](/api/v1/search?q=x) [llms](/llms.txt) [share](/s/abc) [external](https://example.com/x)',
          '[ref link][r] <a href="/docs/reference/errors#invalid_request">html</a> [mail](mailto:a@b.c)',
          '',
          '[r]: /docs/reference/errors',
        ].join('\n'),
      ),
      'reference/errors.md': page('Errors', '## not_found\n\n## invalid_request\n', 'Reference'),
    });
    expect(problems).toEqual([]);
  });

  it('reports each broken link with its line', () => {
    const problems = check({
      'a.md': page(
        'A',
        ['## Intro', '', '[x](#nope)', '[y](/docs/b#intro) [z](/docs/missing)', '[w](/pricing.html)'].join(
          '\n',
        ),
      ),
      'b.md': page('B', '## Other'),
    });
    expect(problems).toEqual([
      'a.md:11: broken link "#nope": this page has no heading with id "nope"',
      'a.md:12: broken link "/docs/b#intro": /docs/b has no heading with id "intro"',
      'a.md:12: broken link "/docs/missing": no page /docs/missing (no file missing.md in the content directory)',
      'a.md:13: broken link "/pricing.html": /pricing.html is neither a docs page nor a file the site generates',
    ]);
  });

  it('reports unparseable and incomplete frontmatter', () => {
    const problems = check({
      'bad-yaml.md': '---\ntitle: [unclosed\n---\n\nBody\n',
      'empty.md': '---\n---\n\nBody\n',
      'no-keywords.md': '---\ntitle: T\ndescription: D\ncategory: Concepts\nkeywords: []\norder: 1\n---\n',
    });
    expect(problems.some((p) => p.startsWith('bad-yaml.md:1: frontmatter is not valid YAML'))).toBe(true);
    // One problem, one line: the YAML parser's code frame stays out of the `file:line: problem` report.
    for (const problem of problems) expect(problem).not.toContain('\n');
    expect(problems.filter((p) => p.startsWith('empty.md:1: frontmatter "'))).toHaveLength(5);
    expect(problems).toContainEqual(expect.stringMatching(/^no-keywords\.md:1: frontmatter "keywords"/));
  });

  it('parses frontmatter with the YAML library the whole monorepo uses', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const declared = { ...manifest.dependencies, ...manifest.devDependencies };
    expect(declared).toHaveProperty('yaml');
    expect(declared).not.toHaveProperty('js-yaml');
    expect(declared).not.toHaveProperty('@types/js-yaml');
  });

  it('accepts tables GFM renders as written', () => {
    const problems = check({
      'a.md': page(
        'A',
        [
          '| Name | Notes |',
          '|---|---|',
          '| `a \\| b` | an escaped pipe stays in its cell |',
          '| two | cells |',
          '',
          'Name | Without outer pipes',
          '--- | ---',
          'x | y',
          '',
          '> | In | A quote |',
          '> |---|---|',
          '> | 1 | 2 |',
          '',
          'A sentence with a | pipe in it is prose.',
          '',
          '```',
          '| code | is | not checked |',
          '```',
        ].join('\n'),
      ),
    });
    expect(problems).toEqual([]);
  });

  it('reports a table row whose cell count differs from the header, with its line', () => {
    const problems = check({
      'a.md': page(
        'A',
        [
          '| Method | Path | Body |',
          '|---|---|---|',
          '| GET | `/a` | |',
          '| POST | `/b` |',
          '| PUT | `/c|d` | 1 KiB |',
        ].join('\n'),
      ),
    });
    expect(problems).toEqual([
      'a.md:12: table row has 2 cells but the header has 3 (escape a | inside a cell as \\|)',
      'a.md:13: table row has 4 cells but the header has 3 (escape a | inside a cell as \\|)',
    ]);
  });

  it('reports rows GFM does not parse as a table at all', () => {
    const notATable = 'line looks like a table row but is not part of a table';
    const problems = check({
      // A row cut off from its table by a sentence, as content/api/nodes.md had.
      'cut.md': page(
        'Cut',
        ['| A | B |', '|---|---|', '| 1 | 2 |', '', 'Some text.', '| 3 | 4 |'].join('\n'),
      ),
      'no-delimiter.md': page('No delimiter', ['| A | B |', '| 1 | 2 |'].join('\n')),
      'short-delimiter.md': page(
        'Short delimiter',
        ['| A | B | C |', '|---|---|', '| 1 | 2 | 3 |'].join('\n'),
      ),
    });
    expect(problems).toEqual([
      `cut.md:14: ${notATable}: a table needs a header row, then a delimiter row (|---|) with as many cells, then its rows with no blank line or text between them`,
      `no-delimiter.md:9: ${notATable}: a table needs a header row, then a delimiter row (|---|) with as many cells, then its rows with no blank line or text between them`,
      `short-delimiter.md:9: ${notATable}: a table needs a header row, then a delimiter row (|---|) with as many cells, then its rows with no blank line or text between them`,
    ]);
  });

  it('reports a closing fence with text after it, which leaves the block open over what follows', () => {
    const problems = check({
      'a.md': page(
        'A',
        [
          '```json',
          '{ "a": 1 }',
          '``` Unknown fields are ignored.',
          '',
          '```bash',
          'curl http://127.0.0.1:8080',
          '```',
        ].join('\n'),
      ),
      // The next example's opening fence, written where the previous block should have closed.
      'b.md': page('B', ['~~~text', 'one', '~~~~ yaml', 'two: 2', '~~~'].join('\n')),
    });
    expect(problems).toEqual([
      'a.md:11: this fence has text after it ("Unknown fields are ignored."), so it does not close the code block opened at line 9, which runs on over what follows: put the fence alone on its line and the text on the next',
      'b.md:11: this fence has text after it ("yaml"), so it does not close the code block opened at line 9, which runs on over what follows: put the fence alone on its line and the text on the next',
    ]);
  });

  it('accepts fences that cannot close the block they are in: shorter, of the other character, or in a list or quote', () => {
    const problems = check({
      'a.md': page(
        'A',
        [
          '````markdown',
          '```bash',
          'npm start',
          '```',
          '````',
          '',
          '~~~markdown',
          '```yaml',
          'a: 1',
          '```',
          '~~~',
          '',
          '- Step:',
          '',
          '  ```bash',
          '  npm test',
          '  ```',
          '',
          '> ```json',
          '> {}',
          '> ```',
          '',
          '    ``` indented code, not a fence',
        ].join('\n'),
      ),
    });
    expect(problems).toEqual([]);
  });

  it('finds no fence in the documentation corpus that leaves a code block open', () => {
    const fences = checkContent(contentDir()).filter((problem) => /fence/.test(problem.message));
    expect(fences).toEqual([]);
  });

  it('finds no broken table in the documentation corpus', () => {
    const tables = checkContent(contentDir()).filter((problem) => /table/.test(problem.message));
    expect(tables).toEqual([]);
  });
});
