/**
 * The deepest nesting of objects and arrays either app accepts in a JSON body. Real payloads
 * (agent inputs, schemas, run bundles) stay far below it; thousands of levels only serve to make
 * recursive code (validators, renderers, serialisers) overflow its stack later.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The nesting depth of JSON text, counted on the text itself in one pass (no recursion), so it
 * can be checked before the text is parsed into something a recursive walker would choke on.
 * Brackets inside strings do not count.
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
