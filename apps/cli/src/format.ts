import { stripVTControlCharacters } from 'node:util';

/** How wide a cell shows: its text without colour codes. */
const visibleLength = (text: string) => stripVTControlCharacters(text).length;

/**
 * Rows as aligned columns under a header, two spaces apart, as a person reads them in a
 * terminal. Cells may be coloured; the width counts only what shows. The last column is not
 * padded, so lines carry no trailing spaces.
 */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(visibleLength(header), ...rows.map((row) => visibleLength(row[column] ?? ''))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell + ' '.repeat(widths[column]! - visibleLength(cell)),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** A duration in milliseconds as a person says it: `850 ms`, `2.4 s`, `3 m 05 s`, `1 h 02 m`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} m ${String(seconds % 60).padStart(2, '0')} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} m`;
}

/** How long ago an ISO time was, from `now`: `12 s ago`, `5 m ago`, `3 h ago`, `2 d ago`; `-` for none. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** A value for a table cell: text as it is, anything else as compact JSON, `-` for nothing. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Indents every line of a block of text. */
export function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : by + line))
    .join('\n');
}
