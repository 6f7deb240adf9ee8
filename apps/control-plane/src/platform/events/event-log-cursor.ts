/**
 * A position in the event log: the writing transaction's id (xid8) and the row id, in the order
 * readers deliver entries. Written as `<tx>-<id>` in decimal, the `id:` of every SSE frame.
 */
export interface Cursor {
  tx: bigint;
  id: bigint;
}

/** Before every entry. */
export const ZERO_CURSOR: Cursor = { tx: 0n, id: 0n };

const CURSOR = /^(\d{1,20})-(\d{1,19})$/;
/** xid8 is an unsigned 64-bit integer; the row id a bigserial (signed 64-bit). */
const MAX_TX = 2n ** 64n - 1n;
const MAX_ID = 2n ** 63n - 1n;

export function formatCursor(cursor: Cursor): string {
  return `${cursor.tx}-${cursor.id}`;
}

/** The cursor an id names, or undefined when it is not one (wrong shape or out of range). */
export function parseCursor(text: string): Cursor | undefined {
  const match = CURSOR.exec(text);
  if (!match) return undefined;
  const cursor = { tx: BigInt(match[1]!), id: BigInt(match[2]!) };
  return cursor.tx <= MAX_TX && cursor.id <= MAX_ID ? cursor : undefined;
}

export function isCursor(text: string): boolean {
  return parseCursor(text) !== undefined;
}

export function compareCursors(a: Cursor, b: Cursor): number {
  if (a.tx !== b.tx) return a.tx < b.tx ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}
