/**
 * What PostgreSQL cannot keep in text and jsonb columns, checked before a write so a request is
 * refused with the offending field named instead of failing inside the database.
 */

declare global {
  interface String {
    /** ES2024, present in Node 20; the workspace typings stop at ES2023. */
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/** PostgreSQL text and jsonb cannot store U+0000, and jsonb refuses a lone UTF-16 surrogate. */
function isUnstorable(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** The path of the first leaf (string, number or member name) of a JSON value that `bad` picks. */
function findLeaf(
  value: unknown,
  bad: (leaf: string | number) => boolean,
  path: (string | number)[],
): (string | number)[] | undefined {
  if (typeof value === 'string' || typeof value === 'number') return bad(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findLeaf(value[i], bad, [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (bad(key)) return [...path, key];
      const found = findLeaf(child, bad, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/** The path of the first string (value or key) the database cannot store (see `isUnstorable`). */
export function findUnstorable(value: unknown): (string | number)[] | undefined {
  return findLeaf(value, (leaf) => typeof leaf === 'string' && isUnstorable(leaf), []);
}

/**
 * The path of the first number beyond double precision (JSON's `1e400`): JSON.parse reads it as
 * Infinity, and JSON.stringify writes that as `null`, so the value kept would not be the one sent.
 */
export function findInfinite(value: unknown): (string | number)[] | undefined {
  return findLeaf(value, (leaf) => typeof leaf === 'number' && !Number.isFinite(leaf), []);
}

/**
 * Text made storable: NUL and lone surrogates become U+FFFD. For prose the control plane keeps
 * from elsewhere (an agent's error message), where refusing would lose the message altogether.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}
