import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** A JSON Pointer token (RFC 6901): `~` and `/` escaped. */
export const pointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The schemas inside a published OpenAPI 3.1 document, compiled on demand with Ajv (draft
 * 2020-12, the dialect of OpenAPI 3.1, plus the standard formats): the test oracle both apps
 * check their real answers with. The document is registered whole, so its `#/components/...`
 * references resolve as a client's validator would resolve them.
 */
export function openApiSchemas(document: object) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // An OpenAPI document is not itself a JSON Schema: nothing is compiled until a pointer is asked for.
  ajv.addSchema(document, 'openapi.json', undefined, false);
  const compiled = new Map<string, ValidateFunction>();
  return {
    /** The validator of the schema at `pointer` (`/components/schemas/Problem`). */
    at(pointer: string): ValidateFunction {
      let validate = compiled.get(pointer);
      if (!validate) {
        validate = ajv.getSchema(`openapi.json#${pointer}`);
        if (!validate) throw new Error(`no schema at ${pointer}`);
        compiled.set(pointer, validate);
      }
      return validate;
    },
    /** One line per failure of the last validation by `validate`. */
    problems(validate: ValidateFunction): string[] {
      return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
    },
  };
}
