import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * A new unguessable id: `<prefix>_` then 26 base32 characters (130 random bits). Status and
 * approval endpoints are keyed by these ids, so they must not be predictable.
 */
export function newId(prefix: string): string {
  if (!/^[a-z][a-z0-9]*$/.test(prefix))
    throw new Error(`id prefix must be lower-case alphanumeric: ${prefix}`);
  const bytes = randomBytes(17);
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += ALPHABET[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return `${prefix}_${out}`;
}

/** The shape every id from {@link newId} has. */
export const ID_PATTERN = /^[a-z][a-z0-9]*_[0-9a-hjkmnp-tv-z]{26}$/;
