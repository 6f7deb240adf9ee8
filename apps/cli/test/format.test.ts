import { describe, expect, it } from 'vitest';
import { colourEnabled } from '../src/colours.ts';
import { ago, duration, table } from '../src/format.ts';

describe('table', () => {
  it('aligns columns by what shows, colour codes aside, with no trailing spaces', () => {
    const green = '\u001b[32mready\u001b[39m';
    expect(
      table(
        ['NODE', 'STATE', 'URL'],
        [
          ['a', green, 'http://x'],
          ['longer-name', 'offline', ''],
        ],
      ),
    ).toBe(
      ['NODE         STATE    URL', `a            ${green}    http://x`, 'longer-name  offline'].join('\n'),
    );
  });
});

describe('duration and ago', () => {
  it('say a span as a person does', () => {
    expect(duration(19)).toBe('19 ms');
    expect(duration(2400)).toBe('2.4 s');
    expect(duration(185_000)).toBe('3 m 05 s');
    expect(duration(3_720_000)).toBe('1 h 02 m');
    expect(duration(null)).toBe('-');
  });

  it('count back from now', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(ago('2026-01-01T11:59:48Z', now)).toBe('12 s ago');
    expect(ago('2026-01-01T11:55:00Z', now)).toBe('5 m ago');
    expect(ago('2025-12-30T12:00:00Z', now)).toBe('2 d ago');
    expect(ago(null, now)).toBe('-');
  });
});

describe('colourEnabled', () => {
  it('colours a terminal, not a pipe', () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
  });

  it('NO_COLOR turns colour off, FORCE_COLOR turns it on and wins', () => {
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
    expect(colourEnabled({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
  });
});
