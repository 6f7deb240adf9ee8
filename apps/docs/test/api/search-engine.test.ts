import { describe, expect, it } from 'vitest';
import type { SearchIndexFile } from '../../server/artifacts/site-artifacts.ts';
import { BM25_B, BM25_K1, buildBm25Index } from '../../server/search/bm25-index.ts';
import { buildSnippet } from '../../server/search/snippet.ts';
import { stem, tokenize } from '../../server/search/tokenize.ts';

function indexOf(
  pages: Array<{ title: string; keywords?: string[]; passages: Array<[string, string, string]> }>,
) {
  const file: SearchIndexFile = {
    version: 1,
    generated_at: '2026-11-22T00:00:00.000Z',
    pages: pages.map((p, i) => ({
      slug: `p${i}`,
      path: `/docs/p${i}`,
      title: p.title,
      description: `About ${p.title}.`,
      category: 'Concepts',
      keywords: p.keywords ?? [],
      order: i,
      markdown_url: `/docs/p${i}.md`,
    })),
    passages: pages.flatMap((p, page) =>
      p.passages.map(([section, anchor, text]) => ({ page, section, anchor, text })),
    ),
  };
  return buildBm25Index(file);
}

describe('tokenize', () => {
  it('lower-cases, splits on punctuation and drops stop words', () => {
    expect(tokenize('How do I set the Rate limit?')).toEqual(['set', 'rate', 'limit']);
  });

  it('keeps identifiers whole as well as in parts', () => {
    expect(tokenize('X-API-Key')).toEqual(['x-api-key', 'x', 'api', 'key']);
    expect(tokenize('workflow_id')).toEqual(['workflow_id', 'workflow', 'id']);
    expect(tokenize('createRunShare')).toEqual(['createrunshare', 'create', 'run', 'share']);
    expect(tokenize('agent.skill:id')).toEqual(['agent.skill', 'agent', 'skill', 'id']);
    expect(tokenize('/api/v1/search')).toEqual(['api', 'v1', 'search']);
  });

  it('stems plurals lightly and leaves short words and identifiers with digits alone', () => {
    expect(['policies', 'routes', 'caches', 'nodes', 'status', 'class', 'v2s'].map(stem)).toEqual([
      'policy',
      'route',
      'cache',
      'node',
      'status',
      'class',
      'v2s',
    ]);
    expect(tokenize('Webhooks')).toEqual(tokenize('webhook'));
  });

  it('handles text in any script', () => {
    expect(tokenize('Überwachung — 監視')).toEqual(['überwachung', '監視']);
  });
});

describe('BM25 index', () => {
  it('uses k1 1.2 and b 0.75', () => {
    expect([BM25_K1, BM25_B]).toEqual([1.2, 0.75]);
  });

  it('scores one passage by the BM25 formula', () => {
    const index = indexOf([
      { title: 'Alpha', passages: [['Beta', 'beta', 'gamma gamma delta']] },
      { title: 'Epsilon', passages: [['Zeta', 'zeta', 'eta theta']] },
    ]);
    const outcome = index.search('gamma', 5);
    // Passage 0 holds title(2) + section(3) + text(3) = 8 weighted terms, passage 1 holds 2 + 3 + 2 = 7.
    const tf = 2;
    const avg = (8 + 7) / 2;
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    const expected = (idf * (tf * 2.2)) / (tf + 1.2 * (1 - 0.75 + (0.75 * 8) / avg));
    expect(outcome.total).toBe(1);
    expect(outcome.hits[0]!.score).toBeCloseTo(expected, 10);
  });

  it('ranks a section about the term above a passing mention, and headings above body text', () => {
    const index = indexOf([
      {
        title: 'Guide',
        passages: [['Intro', 'intro', 'Many things, among them webhooks, exist here in this long text.']],
      },
      {
        title: 'Webhooks',
        passages: [
          ['Webhooks', '', 'Deliveries are signed.'],
          ['Retries', 'retries', 'Failed webhook deliveries are retried.'],
        ],
      },
    ]);
    const paths = index.search('webhooks', 5).hits.map((h) => `${h.page.path}#${h.passage.anchor}`);
    expect(paths[0]).toBe('/docs/p1#');
    expect(paths.indexOf('/docs/p0#intro')).toBe(paths.length - 1);
  });

  it('prefers the passage that holds an identifier exactly over one with its words scattered', () => {
    const index = indexOf([
      { title: 'A', passages: [['Keys', 'keys', 'Send the X-API-Key header.']] },
      { title: 'B', passages: [['Misc', 'misc', 'The api returns a key; x marks the spot.']] },
    ]);
    expect(index.search('X-API-Key', 5).hits[0]!.page.title).toBe('A');
  });

  it('ranks a long passage holding an identifier exactly above a short one full of its parts', () => {
    // As the settings reference (one row of a long table names the variable) against the webhooks
    // page (which names the setting key and its words several times).
    const filler = Array.from({ length: 60 }, (_, i) => `setting${i} controls something else entirely`).join(
      '. ',
    );
    const index = indexOf([
      {
        title: 'Settings',
        passages: [
          [
            'Variables',
            'variables',
            `${filler}. SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_INITIAL_BACKOFF sets it.`,
          ],
        ],
      },
      {
        title: 'Webhooks',
        passages: [
          [
            'Retries',
            'retries',
            'The webhook queue retries: initial backoff 1 s (execution_queue.webhook_initial_backoff), then the backoff doubles; each webhook execution waits in the queue.',
          ],
        ],
      },
    ]);
    expect(index.search('SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_INITIAL_BACKOFF', 5).hits[0]!.page.title).toBe(
      'Settings',
    );
    // The words alone still find the prose about them.
    expect(index.search('webhook initial backoff', 5).hits[0]!.page.title).toBe('Webhooks');
  });

  it('returns at most limit hits, best first, ties in site order, and counts every match', () => {
    const index = indexOf(
      Array.from({ length: 30 }, (_, i) => ({
        title: `Page ${i}`,
        passages: [['Same', `s${i}`, 'shared words']] as Array<[string, string, string]>,
      })),
    );
    const outcome = index.search('shared', 7);
    expect(outcome.total).toBe(30);
    expect(outcome.hits.map((h) => h.page.title)).toEqual(Array.from({ length: 7 }, (_, i) => `Page ${i}`));
  });

  it('answers no hits for unknown terms and leaves no state behind between queries', () => {
    const index = indexOf([{ title: 'Alpha', passages: [['Beta', 'b', 'gamma']] }]);
    const first = index.search('gamma', 5).hits[0]!.score;
    expect(index.search('nothing here', 5)).toMatchObject({ total: 0, hits: [] });
    expect(index.search('gamma', 5).hits[0]!.score).toBe(first);
  });
});

describe('snippets', () => {
  const long = `${'Lorem ipsum dolor sit amet. '.repeat(20)}The rate limit is 120 requests per window. ${'Filler text again. '.repeat(20)}`;

  it('cuts about 240 characters around the best match, at word boundaries, with ellipses', () => {
    const snippet = buildSnippet(long, tokenize('rate limit'));
    expect(snippet).toContain('The rate limit is 120 requests per window.');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet.length).toBeLessThanOrEqual(242);
    expect(snippet).not.toMatch(/\s{2,}/);
  });

  it('returns short text whole, collapsed to one line, and falls back when the passage is empty', () => {
    expect(buildSnippet('Line one\n\n  line two', ['line'])).toBe('Line one line two');
    expect(buildSnippet('', ['x'], 'The description.')).toBe('The description.');
  });
});
