import { type OutputUnit, type Schema, type SchemaDraft, Validator } from '@cfworker/json-schema';
import {
  type CustomValidator,
  createErrorHandler,
  type ErrorSchema,
  ErrorSchemaBuilder,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  unwrapErrorHandler,
  type ValidationData,
  type ValidatorType,
  validationDataMerge,
} from '@rjsf/utils';

/*
 * The form's validator. rjsf's own (@rjsf/validator-ajv8) compiles every schema into JavaScript
 * with `new Function`, which the dashboard's Content-Security-Policy (script-src 'self', no
 * 'unsafe-eval') refuses; its precompiled mode needs the schemas at build time, and agents
 * register theirs at run time. @cfworker/json-schema interprets a schema instead of compiling
 * it, so it runs under the policy; this module adapts it to rjsf's ValidatorType.
 *
 * The control plane validates the input again with ajv (the same drafts: `$schema` picks one,
 * draft-07 when absent), so whatever this validator misses still comes back as a 400 that names
 * each field.
 */

type Json = Record<string, unknown>;

/** The draft a schema's `$schema` names, as the control plane reads it; draft-07 when absent. */
export function draftOf(schema: Json): SchemaDraft {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft\/2020-12\//.test(declared)) return '2020-12';
  if (/draft\/2019-09\//.test(declared)) return '2019-09';
  if (/draft-04\//.test(declared)) return '4';
  return '7';
}

/** A JSON Pointer's segments ("#/a/0/b~1c" → ["a", "0", "b/c"]). */
function pointerSegments(location: string): string[] {
  const pointer = location.replace(/^#/, '');
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `required` is reported on the object; the form shows it on the missing member. */
const MISSING = /required property "([^"]*)"/;

interface FieldFailure {
  path: string[];
  error: RJSFValidationError;
}

/**
 * The failures a person can act on: cfworker reports each failing keyword with the keywords that
 * contain it ("Property "n" does not match schema." above "5 is greater than 3."); only the
 * innermost ones say what to change, so a unit with a deeper unit under its keyword is left out.
 */
function leafFailures(units: OutputUnit[]): FieldFailure[] {
  const leaves = units.filter(
    (unit) =>
      !units.some((other) => other !== unit && other.keywordLocation.startsWith(`${unit.keywordLocation}/`)),
  );
  return leaves.map((unit) => {
    const path = pointerSegments(unit.instanceLocation);
    let message = unit.error;
    if (unit.keyword === 'required') {
      const missing = MISSING.exec(unit.error)?.[1];
      if (missing !== undefined) {
        path.push(missing);
        message = 'is required';
      }
    }
    const property = path.length === 0 ? '.' : `.${path.join('.')}`;
    return {
      path,
      error: {
        name: unit.keyword,
        property,
        message,
        stack: `${property === '.' ? 'input' : property.slice(1)}: ${message}`,
        schemaPath: unit.keywordLocation,
      },
    };
  });
}

/** An error schema (errors by field path) from failures. */
function errorSchemaOf(failures: FieldFailure[]): ErrorSchema {
  const builder = new ErrorSchemaBuilder();
  for (const { path, error } of failures) builder.addErrors(error.message ?? error.stack, path);
  return builder.ErrorSchema;
}

/**
 * Validators by schema object: rjsf asks about the same (sub)schemas on every render, and
 * building a Validator dereferences the whole schema.
 */
const cache = new WeakMap<object, Validator>();

function validatorFor(schema: Json, root?: Json): Validator {
  const cached = cache.get(schema);
  if (cached) return cached;
  // A subschema's `#/definitions/…` and `#/$defs/…` references point into the root schema:
  // carried along, they resolve against the subschema as they would against the root.
  const withDefinitions =
    root && root !== schema
      ? {
          ...schema,
          ...(root.definitions ? { definitions: root.definitions } : {}),
          ...(root.$defs ? { $defs: root.$defs } : {}),
        }
      : schema;
  const validator = new Validator(withDefinitions as Schema, draftOf(root ?? schema), false);
  cache.set(schema, validator);
  return validator;
}

function run(schema: Json, data: unknown, root?: Json): { failures: FieldFailure[]; invalidSchema?: Error } {
  try {
    const result = validatorFor(schema, root).validate(data);
    return { failures: result.valid ? [] : leafFailures(result.errors) };
  } catch (error) {
    // An unresolvable $ref or a pattern this browser cannot compile: the server decides.
    return { failures: [], invalidSchema: error as Error };
  }
}

/** rjsf's ValidatorType over @cfworker/json-schema (see the top of this file for why). */
export const cspSafeValidator: ValidatorType = {
  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator,
    transformErrors?: ErrorTransformer,
    uiSchema?: UiSchema,
  ): ValidationData<unknown> {
    const { failures } = run(schema as Json, formData);
    let errors = failures.map((failure) => failure.error);
    let errorSchema = errorSchemaOf(failures);
    if (transformErrors) {
      errors = transformErrors(errors, uiSchema);
      const builder = new ErrorSchemaBuilder();
      for (const error of errors) if (error.message) builder.addErrors(error.message, error.property);
      errorSchema = builder.ErrorSchema;
    }
    if (!customValidate) return { errors, errorSchema };
    const handler = customValidate(formData, createErrorHandler(formData), uiSchema, errorSchema);
    return validationDataMerge({ errors, errorSchema }, unwrapErrorHandler(handler));
  },

  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    const { failures, invalidSchema } = run(schema as Json, formData, rootSchema as Json);
    return !invalidSchema && failures.length === 0;
  },

  rawValidation<Result = unknown>(schema: RJSFSchema, formData?: unknown) {
    const { failures, invalidSchema } = run(schema as Json, formData);
    return {
      errors: failures.map((failure) => failure.error) as Result[],
      ...(invalidSchema ? { validationError: invalidSchema } : {}),
    };
  },
};
