import { type FieldError, fieldPath } from '@switchyard/shared';
import { Ajv, type AsyncValidateFunction, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { linearRegExp, RefusedPatternError } from './schema-patterns.ts';

/**
 * JSON Schemas of registered functions, compiled with ajv. Registration compiles every
 * `input_schema` and `output_schema` and refuses one ajv cannot compile; the execution feature
 * validates inputs with the same compiled validators.
 */

/** A compiled function schema: `validate` lists the failing fields of a value (empty when it passes). */
export interface CompiledSchema {
  validate(value: unknown): FieldError[];
}

/** Which schema of a function is compiled: only `input_schema` validators ever run. */
export type SchemaMember = 'input_schema' | 'output_schema';

// Strict mode is off: agents' schema generators (pydantic, zod-to-json-schema) add keywords ajv
// does not know (`title` is known, but `discriminator`, `x-*`, `examples` in odd places are not)
// and those must not make a valid schema unusable. Everything ajv itself cannot compile (a wrong
// type for a keyword, an unresolvable $ref, a bad regex) still fails. allErrors lets a refused
// input list every failing field, not only the first.
const BASE_OPTIONS = { strict: false, allErrors: true, logger: false } as const;
// Input schemas validate callers' inputs, so their patterns run on the linear-time engine (see
// schema-patterns.ts). Output schemas are only published: the control plane never runs their
// validators, so their patterns need only be valid ECMA-262 (ajv's default RegExp checks that
// without running them), and a lookahead there does not cost an agent its registration.
const OPTIONS: Record<SchemaMember, Options> = {
  input_schema: { ...BASE_OPTIONS, code: { regExp: linearRegExp } },
  output_schema: BASE_OPTIONS,
};

function withFormats<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

/** One ajv per draft and member, created on first use; the `$schema` of a schema picks the draft. */
const engines = {
  'draft-07': (options: Options) => withFormats(new Ajv(options)),
  '2019-09': (options: Options) => withFormats(new Ajv2019(options)),
  '2020-12': (options: Options) => withFormats(new Ajv2020(options)),
};
type Draft = keyof typeof engines;
const created = new Map<string, Ajv>();

function engine(draft: Draft, member: SchemaMember): Ajv {
  const key = `${draft} ${member}`;
  let ajv = created.get(key);
  if (!ajv) {
    ajv = engines[draft](OPTIONS[member]);
    created.set(key, ajv);
  }
  return ajv;
}

/**
 * The draft a `$schema` names. No `$schema` means draft-07, ajv's default and what most
 * generators target; draft-06 schemas are valid draft-07 schemas in practice. Matching is loose
 * (http or https, with or without the trailing `#`) because generators spell it every way.
 */
function draftOf(schema: Record<string, unknown>): Draft | { unsupported: string } {
  const declared = schema.$schema;
  if (declared === undefined) return 'draft-07';
  if (typeof declared !== 'string') return { unsupported: JSON.stringify(declared) };
  if (/^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/.test(declared)) return 'draft-07';
  if (/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(declared)) return '2019-09';
  if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  return { unsupported: declared };
}

/** Thrown by {@link compileJsonSchema} for a schema ajv cannot compile; the message says why. */
export class InvalidSchemaError extends Error {
  override name = 'InvalidSchemaError';
}

/**
 * An input schema whose pattern the linear-time engine cannot run (a lookaround, a
 * back-reference, past RE2's limits): `pointer` is where the schema holds it, as a JSON Pointer.
 */
export class UnsupportedPatternError extends InvalidSchemaError {
  override name = 'UnsupportedPatternError';
  constructor(
    readonly pattern: string,
    readonly pointer: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern.slice(0, 200))} at ${pointer} ${reason}`);
  }
}

// Keywords whose values are data, not subschemas: a `pattern` member inside them is not one.
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
// Keywords whose members are named by the schema's author: a member called `const` is a subschema.
const NAMED_SUBSCHEMAS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);

const pointerPart = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Where a schema holds `pattern` (as `pattern` or as a `patternProperties` key), for the error
 * that refuses it. ajv hands its regex engine the pattern alone, not the place, so the place is
 * looked up here: a plain walk over the JSON, since only the message depends on it.
 */
function patternPointer(node: unknown, pattern: string, at = '', parentKey = ''): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  for (const [key, value] of Object.entries(node)) {
    if (!Array.isArray(node) && !NAMED_SUBSCHEMAS.has(parentKey) && DATA_KEYWORDS.has(key)) continue;
    const here = `${at}/${pointerPart(key)}`;
    if (key === 'pattern' && value === pattern) return here;
    if (key === 'patternProperties' && value && typeof value === 'object' && Object.hasOwn(value, pattern)) {
      return `${here}/${pointerPart(pattern)}`;
    }
    const deeper = patternPointer(value, pattern, here, Array.isArray(node) ? parentKey : key);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

function errorField(error: ErrorObject): string {
  // instancePath is a JSON Pointer (`/items/0/name`); the API spells paths with fieldPath.
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  if (error.keyword === 'required') parts.push((error.params as { missingProperty: string }).missingProperty);
  return fieldPath(parts);
}

function wrap(validator: ValidateFunction): CompiledSchema {
  return {
    validate(value) {
      if (validator(value)) return [];
      return (validator.errors ?? []).map((e) => ({ field: errorField(e), message: e.message ?? e.keyword }));
    },
  };
}

/*
 * Compiled validators by schema text. Agents register the same schemas again at every restart
 * and many functions share trivial ones (`{"type":"object"}`); compiling costs about a
 * millisecond each on a small machine, so recompiling 4,000 schemas of a large registration
 * would cost seconds. Map keeps insertion order, so the oldest entry is the first key: a small
 * least-recently-used memo, bounded by entries and by the bytes of the schema texts it keys on.
 */
const MEMO_ENTRIES = 2000;
const MEMO_BYTES = 8 * 1024 * 1024;
const memo = new Map<string, CompiledSchema>();
let memoBytes = 0;

function remember(key: string, compiled: CompiledSchema): void {
  if (key.length > MEMO_BYTES / 4) return; // one huge schema must not flush everything else
  memo.set(key, compiled);
  memoBytes += key.length;
  while (memo.size > MEMO_ENTRIES || memoBytes > MEMO_BYTES) {
    const oldest = memo.keys().next().value as string;
    memo.delete(oldest);
    memoBytes -= oldest.length;
  }
}

/** Makes `target` hold exactly the members of `saved` again (ajv's registries are plain objects). */
function restore(target: Record<string, unknown>, saved: Record<string, unknown>): void {
  for (const key of Object.keys(target)) if (!Object.hasOwn(saved, key)) delete target[key];
  for (const key of Object.keys(saved)) {
    // defineProperty, not assignment: an $id such as "__proto__" is a key like any other here.
    if (target[key] !== saved[key])
      Object.defineProperty(target, key, {
        value: saved[key],
        writable: true,
        enumerable: true,
        configurable: true,
      });
  }
}

/**
 * Compiles a JSON Schema (draft-07 unless its `$schema` says 2019-09 or 2020-12) into a reusable
 * validator. Throws {@link InvalidSchemaError} when ajv cannot compile it, and
 * {@link UnsupportedPatternError} when an input schema holds a pattern the linear-time engine
 * cannot run.
 */
export function compileJsonSchema(
  schema: Record<string, unknown>,
  member: SchemaMember = 'input_schema',
): CompiledSchema {
  const key = `${member} ${JSON.stringify(schema)}`;
  const known = memo.get(key);
  if (known) {
    memo.delete(key); // refreshed: it moves to the young end
    memo.set(key, known);
    return known;
  }
  const draft = draftOf(schema);
  if (typeof draft !== 'string') {
    throw new InvalidSchemaError(
      `$schema ${draft.unsupported} is not supported (use draft-07, 2019-09 or 2020-12, or leave $schema out)`,
    );
  }
  const ajv = engine(draft, member);
  // A copy without $schema: the engine was chosen by it, and ajv would look the exact spelling
  // up among its meta-schemas (https, a trailing #) and fail on a harmless variant.
  const { $schema: _ignored, ...body } = schema;
  let validator: ValidateFunction;
  // ajv keeps every compiled schema's $id (the root's and nested ones) in its registry, which
  // also holds its meta-schemas. The registry is put back exactly as it was after each compile:
  // otherwise it would grow with every registration, two functions sharing an $id would collide,
  // and removing a schema whose $id names a meta-schema (ajv.removeSchema deletes by $id) would
  // delete the meta-schema itself, after which no schema compiles until a restart.
  const registry = { schemas: { ...ajv.schemas }, refs: { ...ajv.refs } };
  try {
    validator = ajv.compile(body);
  } catch (error) {
    if (error instanceof RefusedPatternError) {
      const pointer = patternPointer(body, error.pattern) ?? '(a subschema)';
      throw new UnsupportedPatternError(error.pattern, pointer, error.reason);
    }
    throw new InvalidSchemaError((error as Error).message);
  } finally {
    ajv.removeSchema(body);
    restore(ajv.schemas, registry.schemas);
    restore(ajv.refs, registry.refs);
  }
  // An `$async` schema compiles to a validator that returns a promise, which `validate` would
  // read as "valid" whatever the value.
  if ((validator as Partial<AsyncValidateFunction>).$async) {
    throw new InvalidSchemaError('$async schemas are not supported: inputs are validated synchronously');
  }
  const compiled = wrap(validator);
  remember(key, compiled);
  return compiled;
}

/** The functions of a registration, as the schema checks see them. */
interface RegisteredFunctions {
  reasoners: ReadonlyArray<{ id: string; input_schema?: unknown; output_schema?: unknown }>;
  skills: ReadonlyArray<{ id: string; input_schema?: unknown; output_schema?: unknown }>;
}

/** Longest stretch of compiling before the event loop gets a turn. */
const SLICE_MS = 10;

/**
 * Compiles every `input_schema` and `output_schema` of a registration and lists the ones ajv
 * cannot compile, each named by its field (`reasoners[2].input_schema`) and its function. A large
 * registration (thousands of new schemas) takes seconds of CPU: the work yields to the event loop
 * every few milliseconds so health checks and other requests keep being answered meanwhile.
 */
export async function checkFunctionSchemas(registration: RegisteredFunctions): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  let sliceStart = performance.now();
  for (const kind of ['reasoners', 'skills'] as const) {
    const singular = kind === 'reasoners' ? 'reasoner' : 'skill';
    for (const [index, fn] of registration[kind].entries()) {
      for (const member of ['input_schema', 'output_schema'] as const) {
        const schema = fn[member];
        if (schema === undefined) continue;
        try {
          compileJsonSchema(schema as Record<string, unknown>, member);
        } catch (error) {
          if (!(error instanceof InvalidSchemaError)) throw error;
          const why =
            error instanceof UnsupportedPatternError
              ? error.message
              : `is not a JSON Schema ajv can compile: ${error.message}`;
          errors.push({
            field: fieldPath([kind, index, member]),
            message: `${singular} "${fn.id}": ${member} ${why.slice(0, 500)}`,
          });
        }
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resume) => setImmediate(resume));
          sliceStart = performance.now();
        }
      }
    }
  }
  return errors;
}
