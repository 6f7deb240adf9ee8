import { describe, expect, it } from 'vitest';
import { contrastRatio, readableColour, readableTheme } from '../src/lib/code-themes.ts';
import { pagePassages } from '../src/lib/passages.ts';
import { parseCodeMeta } from '../src/plugins/shiki-code-meta.ts';

const rgb = (hex: string): [number, number, number] => [
  Number.parseInt(hex.slice(1, 3), 16),
  Number.parseInt(hex.slice(3, 5), 16),
  Number.parseInt(hex.slice(5, 7), 16),
];

describe('code fence meta', () => {
  it('reads quoted and bare key=value pairs after the language', () => {
    const meta = parseCodeMeta(`title="agent server.mjs" tab='TypeScript' lines=3 {1,2}`);
    expect(Object.fromEntries(meta)).toEqual({ title: 'agent server.mjs', tab: 'TypeScript', lines: '3' });
    expect(parseCodeMeta(undefined).size).toBe(0);
  });
});

describe('readable code themes', () => {
  it('keeps a colour that already reads at 4.5:1 and strengthens one that does not', () => {
    expect(readableColour('#24292e', '#f6f7f9')).toBe('#24292e');
    // github-dark's comment grey on the site's dark code background reads at about 3.6:1.
    expect(contrastRatio(rgb('#6a737d'), rgb('#16161e'))).toBeLessThan(4.5);
    const fixed = readableColour('#6a737d', '#16161e');
    expect(contrastRatio(rgb(fixed), rgb('#16161e'))).toBeGreaterThanOrEqual(4.5);
  });

  it('measures a translucent colour over the background it is painted on', () => {
    const fixed = readableColour('#ffffff40', '#16161e');
    expect(fixed).toMatch(/^#[0-9a-f]{6}$/);
    expect(contrastRatio(rgb(fixed), rgb('#16161e'))).toBeGreaterThanOrEqual(4.5);
  });

  it('leaves no token colour of the site themes under 4.5:1 on their backgrounds', async () => {
    for (const [name, background] of [
      ['github-light', '#f6f7f9'],
      ['github-dark', '#16161e'],
    ] as const) {
      const theme = await readableTheme(name, background);
      const colours = theme.tokenColors!.flatMap((rule) => rule.settings.foreground ?? []);
      expect(colours.length, name).toBeGreaterThan(10);
      // A colour that reaches 4.5:1 (blended over the background when translucent) comes back unchanged.
      for (const colour of colours)
        expect(readableColour(colour, background), `${name} ${colour}`).toBe(colour);
    }
  });
});

describe('callout markers in search passages', () => {
  it('drops the `[!NOTE]` marker and keeps the callout text', () => {
    const [passage] = pagePassages('Page', '> [!WARNING]\n> Stop the server first.');
    expect(passage?.text).toBe('Stop the server first.');
  });
});
