import { describe, expect, it } from 'vitest';
import { splitFrontmatter } from '../src/lib/markdown-source.ts';
import { pagePassages } from '../src/lib/passages.ts';

describe('pagePassages', () => {
  it("keeps a section's code blocks after its prose, so snippets come from the prose", () => {
    const [passage] = pagePassages(
      'Nodes',
      ['```bash', 'curl -X POST /heartbeat', '```', '', 'Send a heartbeat every 10 s.'].join('\n'),
    );
    expect(passage!.text).toBe('Send a heartbeat every 10 s.\n\ncurl -X POST /heartbeat');
  });

  it('makes one passage per ## and ### section, with the text before them under the title', () => {
    const passages = pagePassages(
      'Webhooks',
      [
        'Intro with **bold** and a [link](/docs/x).',
        '',
        '## Signatures',
        '',
        'Each delivery carries `X-Service-Signature`.',
        '',
        '```bash',
        'curl -H "Accept: */*" http://localhost',
        '```',
        '',
        '### Verifying',
        '',
        '- compute the HMAC',
        '- compare in constant time',
        '',
        '#### Deep heading',
        '',
        '| a | b |',
        '|---|---|',
        '| one | two |',
        '',
        '## Signatures',
        '',
        'Again.',
      ].join('\n'),
    );
    expect(passages).toEqual([
      { section: 'Webhooks', anchor: '', text: 'Intro with bold and a link.' },
      {
        section: 'Signatures',
        anchor: 'signatures',
        text: 'Each delivery carries X-Service-Signature.\n\ncurl -H "Accept: */*" http://localhost',
      },
      {
        section: 'Verifying',
        anchor: 'verifying',
        text: 'compute the HMAC\ncompare in constant time\n\nDeep heading\n\na b\none two',
      },
      { section: 'Signatures', anchor: 'signatures-1', text: 'Again.' },
    ]);
  });
});

describe('pagePassages for headings without text of their own', () => {
  it('keeps a passage, with the heading as its text, for a heading followed directly by a subheading or ending the page', () => {
    const passages = pagePassages(
      'Deploying',
      ['## Storage backends', '', '### PostgreSQL', '', 'Set DATABASE_URL.', '', '## Appendix'].join('\n'),
    );
    expect(passages).toEqual([
      { section: 'Storage backends', anchor: 'storage-backends', text: 'Storage backends' },
      { section: 'PostgreSQL', anchor: 'postgresql', text: 'Set DATABASE_URL.' },
      { section: 'Appendix', anchor: 'appendix', text: 'Appendix' },
    ]);
  });

  it('still drops an empty stretch before the first heading', () => {
    expect(pagePassages('Empty intro', '## Only\n\nText.')).toEqual([
      { section: 'Only', anchor: 'only', text: 'Text.' },
    ]);
  });
});

describe('splitFrontmatter', () => {
  it('separates the YAML from a trimmed body and leaves files without frontmatter whole', () => {
    expect(splitFrontmatter('---\ntitle: A\n---\n\n# Body\n\n')).toEqual({
      frontmatter: 'title: A\n',
      body: '# Body',
    });
    expect(splitFrontmatter('Just text\n')).toEqual({ frontmatter: null, body: 'Just text' });
  });
});
