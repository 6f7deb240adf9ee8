import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/** 17 random bytes carry an id's 130 bits. */
const ID_BYTES = 17;
/**
 * Random bytes are drawn from the CSPRNG for 256 ids at a time and each byte is used once, as
 * Node's own randomUUID does: a call into OpenSSL per id (with its fork check, a getpid system
 * call) cost more than the rest of the id, and every request makes two or three of them.
 */
const pool = Buffer.alloc(ID_BYTES * 256);
let taken = pool.length;

/**
 * A new unguessable id: `<prefix>_` then 26 base32 characters (130 random bits). Status and
 * approval endpoints are keyed by these ids, so they must not be predictable.
 */
export function newId(prefix: string): string {
  if (!/^[a-z][a-z0-9]*$/.test(prefix))
    throw new Error(`id prefix must be lower-case alphanumeric: ${prefix}`);
  if (taken === pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  const start = taken;
  taken += ID_BYTES;
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let index = start; index < start + ID_BYTES; index++) {
    buffer = (buffer << 8) | pool[index]!;
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
