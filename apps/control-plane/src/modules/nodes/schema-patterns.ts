import { RegExpValidator } from '@eslint-community/regexpp';
import type { CodeOptions } from 'ajv';
import { RE2JS, RE2JSException } from 're2js';

/**
 * The regular-expression engine of input schemas. ajv compiles every `pattern`,
 * `patternProperties` key and `propertyNames` pattern it will run through the `code.regExp`
 * option; the default is JavaScript's backtracking RegExp, where `^(a+)+$` against thirty `a`
 * and a `!` takes seconds and doubles with each character, blocking the event loop meanwhile.
 * Here each pattern is compiled by re2js (a port of RE2), whose matching time grows linearly
 * with the input whatever the pattern.
 *
 * A schema pattern is an ECMA-262 regular expression (with ajv's `u` flag). Two features of
 * those cannot run in linear time and RE2 has neither: lookaround assertions and
 * back-references. A pattern using one, or one RE2 cannot compile (a repeat count over 1000, a
 * Unicode property spelt `\p{Script=Greek}`), is refused when the schema is compiled, that is
 * at registration, never while a call is validated.
 */

/** A valid ECMA-262 pattern that the linear-time engine cannot run (or not as written); `reason` says why. */
export class RefusedPatternError extends Error {
  override name = 'RefusedPatternError';
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern.slice(0, 200))} ${reason}`);
  }
}

const NOT_LINEAR =
  'which schema patterns cannot use: they run on a linear-time engine (RE2 syntax), without lookarounds or back-references';

/**
 * Checks the pattern's ECMA-262 syntax (a SyntaxError, as RegExp would throw, when it is not a
 * regular expression at all) and says why the linear-time engine must not run it, if it must
 * not. This happens before re2js sees the pattern: re2js's translation from ECMA-262 syntax
 * turns an escape it does not know into the plain letter, so the named back-reference `\k<n>`
 * would silently match the text "k<n>".
 */
function refusal(pattern: string, unicode: boolean): string | undefined {
  let found: string | undefined;
  const validator = new RegExpValidator({
    onLookaroundAssertionEnter(_start, kind, negate) {
      const opening = `(?${kind === 'lookbehind' ? '<' : ''}${negate ? '!' : '='}`;
      found ??= `uses a ${kind} assertion "${opening}…", ${NOT_LINEAR}`;
    },
    onBackreference(start, end) {
      found ??= `uses a back-reference "${pattern.slice(start, end)}", ${NOT_LINEAR}`;
    },
    onCharacter(start, end, value) {
      // `\uD83D\uDE00` is one character (U+1F600) to ECMA-262 with the u flag, but re2js's
      // translation reads it as two surrogates, which never match: refused, not silently changed.
      const source = pattern.slice(start, end);
      if (value > 0xffff && /^\\u[0-9A-Fa-f]{4}/.test(source)) {
        const codePoint = value.toString(16).toUpperCase();
        found ??= `uses the surrogate pair escape "${source}", which the linear-time engine that runs schema patterns reads as two characters: write \\u{${codePoint}}`;
      }
    },
  });
  validator.validatePattern(pattern, 0, pattern.length, { unicode });
  return found;
}

/** One compiled pattern, as ajv uses it: `test` finds a match anywhere in the string. */
interface LinearPattern {
  test(text: string): boolean;
  toString(): string;
}

function compileLinear(pattern: string, flags: string): LinearPattern {
  const refused = refusal(pattern, flags.includes('u'));
  if (refused) throw new RefusedPatternError(pattern, refused);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    throw new RefusedPatternError(
      pattern,
      `cannot be compiled by the linear-time engine that runs schema patterns (RE2 syntax): ${error.message}`,
    );
  }
  // ajv keys its compiled patterns by toString(): the pattern as the schema spells it.
  return { test: (text) => compiled.test(text), toString: () => pattern };
}

/** ajv's `code.regExp` option: `code` names the engine in ajv's standalone output, unused here. */
export const linearRegExp: NonNullable<CodeOptions['regExp']> = Object.assign(compileLinear, {
  code: 'linearRegExp',
});
