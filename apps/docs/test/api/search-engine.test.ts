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
      synonyms: [],
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
    expect(tokenize('createRunShare')).toEqual(['createrunshare', stem('create'), 'run', 'share']);
    expect(tokenize('agent.skill:id')).toEqual(['agent.skill', 'agent', 'skill', 'id']);
    expect(tokenize('/api/v1/search')).toEqual(['api', 'v1', 'search']);
  });

  it('stems words to their root and leaves short words and words with digits alone', () => {
    for (const family of [
      ['configure', 'configuration', 'configuring', 'configured'],
      ['routes', 'route', 'routing'],
      ['policies', 'policy'],
      ['webhooks', 'webhook'],
    ]) {
      expect(new Set(family.map(stem)).size, family.join(' ')).toBe(1);
    }
    expect(['api', 'ids', 'v2s', 's3'].map(stem)).toEqual(['api', 'ids', 'v2s', 's3']);
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

  it('returns at most limit pages, best first, ties in site order, and counts every matching page', () => {
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

  it('gives each page one result, its best section, with its other matching sections', () => {
    const index = indexOf([
      {
        title: 'Docker',
        passages: [
          ['Docker', '', 'Docker docker docker: build the image with docker.'],
          ['Run', 'run', 'docker run the image'],
          ['Compose', 'compose', 'docker compose up'],
          ['Logs', 'logs', 'docker logs'],
          ['Stop', 'stop', 'docker stop'],
        ],
      },
      {
        title: 'Docs site',
        passages: [['Container', 'container', 'The docs site also ships a docker image.']],
      },
    ]);
    const outcome = index.search('docker', 5);
    expect(outcome.total).toBe(2);
    expect(outcome.hits.map((h) => h.page.title)).toEqual(['Docker', 'Docs site']);
    expect(outcome.hits[0]!.passage.anchor).toBe('');
    expect(outcome.hits[0]!.sections).toHaveLength(3);
    expect(outcome.hits[0]!.sections.map((p) => p.anchor)).not.toContain('');
    expect(outcome.hits[1]!.sections).toEqual([]);
  });

  it('finds a word misspelt by one edit, or two in a long word, below the word as written', () => {
    const index = indexOf([
      { title: 'Presence', passages: [['Heartbeats', 'hb', 'Agents send a heartbeat every 10 s.']] },
      { title: 'Memory', passages: [['Scopes', 'scopes', 'Memory is kept per scope.']] },
      { title: 'Discovery', passages: [['Capabilities', 'caps', 'Discovery lists every capability.']] },
    ]);
    expect(index.search('hartbeat', 5).hits.map((h) => h.page.title)).toEqual(['Presence']);
    expect(index.search('memroy', 5).hits.map((h) => h.page.title)).toEqual(['Memory']);
    expect(index.search('discovry capabilites', 5).hits[0]!.page.title).toBe('Discovery');
    expect(index.search('hxrtbext', 5).hits).toEqual([]);
    expect(index.search('zzzz', 5).hits).toEqual([]);
    // The snippet words include the spelling found, so the snippet shows it.
    expect(index.search('hartbeat', 5).needles).toContain('heartbeat');
    const exact = index.search('heartbeat', 5).hits[0]!.score;
    expect(index.search('hartbeat', 5).hits[0]!.score).toBeLessThan(exact);
  });

  it('reads a word the site has rarely as the much more frequent word one edit away, keeping its page', () => {
    const index = indexOf([
      { title: 'Search', passages: [['Typos', 'typos', 'A query for hartbeat still finds the right page.']] },
      ...Array.from({ length: 12 }, (_, i) => ({
        title: `Presence ${i}`,
        passages: [['Leases', `l${i}`, `Each heartbeat renews the lease of instance ${i}.`]] as Array<
          [string, string, string]
        >,
      })),
      ...Array.from({ length: 100 }, (_, i) => ({
        title: `Other ${i}`,
        passages: [['Else', `e${i}`, `Something else entirely, number ${i}.`]] as Array<
          [string, string, string]
        >,
      })),
    ]);
    const titles = index.search('hartbeat', 20).hits.map((h) => h.page.title);
    expect(titles[0]).toBe('Presence 0');
    expect(titles).toContain('Search');
    // A rare word with no frequent neighbour is searched as written only.
    expect(index.search('typos', 5).terms).toEqual(['typo']);
  });

  it('completes a word being typed to the words it begins, not to identifiers', () => {
    const index = indexOf([
      { title: 'Webhooks', passages: [['Deliveries', 'd', 'Each webhook delivery is signed.']] },
      { title: 'Errors', passages: [['Codes', 'c', 'The webhook_error field says why.']] },
      { title: 'Web', passages: [['UI', 'ui', 'The web dashboard.']] },
    ]);
    expect(index.search('webho', 5).terms).toEqual(['webhook']);
    expect(index.search('webho', 5).hits[0]!.page.title).toBe('Webhooks');
    expect(index.search('webhook_e', 5).terms).toEqual(['webhook_error', 'webhook']);
    // A word the site has is searched as written, not completed.
    expect(index.search('web', 5).terms).toEqual(['web']);
  });

  it('ranks the page whose title names the query above one that only repeats its words', () => {
    const index = indexOf([
      {
        title: 'CLI reference',
        passages: [['Commands', 'c', 'memory scopes: memory get, memory set, memory list, memory scopes']],
      },
      { title: 'Memory scopes', passages: [['Kinds', 'k', 'There are four kinds of memory.']] },
    ]);
    expect(index.search('memory scopes', 5).hits[0]!.page.title).toBe('Memory scopes');
  });

  it("searches a writer's synonyms with every word of their group", () => {
    const file = {
      version: 1 as const,
      generated_at: '2026-11-22T00:00:00.000Z',
      pages: [
        {
          slug: 'a',
          path: '/docs/a',
          title: 'Approvals',
          description: 'Pause for a person.',
          category: 'Concepts',
          keywords: [],
          synonyms: [['hitl', 'human in the loop', 'approval']],
          order: 0,
          markdown_url: '/docs/a.md',
        },
        {
          slug: 'b',
          path: '/docs/b',
          title: 'Other',
          description: 'Other things.',
          category: 'Concepts',
          keywords: [],
          synonyms: [],
          order: 1,
          markdown_url: '/docs/b.md',
        },
      ],
      passages: [
        { page: 0, section: 'Approvals', anchor: '', text: 'An approval pauses an execution.' },
        { page: 1, section: 'Other', anchor: '', text: 'Loops and retries.' },
      ],
    };
    const index = buildBm25Index(file);
    // Without the group, `hitl` finds nothing; with it, the page naming all its words first.
    expect(index.search('hitl', 5).hits[0]!.page.title).toBe('Approvals');
    expect(index.search('hitl', 5).needles).toEqual(expect.arrayContaining(['approval', 'loop']));
    expect(index.search('human in the loop', 5).hits[0]!.page.title).toBe('Approvals');
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
