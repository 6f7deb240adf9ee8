import type { z } from 'zod';

/** The named members of an object type: string keys other than an index signature's. */
type NamedKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: 0;
};

/**
 * An answer's type with only the members its schema names. Response schemas are loose objects
 * (clients must accept members they do not know), so their inferred types carry an index
 * signature that would let a view return any member the document never mentions; dropping it
 * (at every depth) makes the compiler reject those. Records, objects with no named member, keep
 * their index signature, and their values are checked the same way (a map of node id to status
 * summary rejects a summary with an undocumented member too).
 */
type Documented<T> = T extends readonly (infer Item)[]
  ? Documented<Item>[]
  : T extends object
    ? [NamedKeys<T>] extends [never]
      ? { [K in keyof T]: Documented<T[K]> }
      : { [K in keyof T as string extends K ? never : number extends K ? never : K]: Documented<T[K]> }
    : T;

/**
 * The body a route answers with, as its response schema documents it: what a view builder
 * declares as its return type, so a view that leaves out, mistypes or adds a member fails to
 * compile instead of drifting from the OpenAPI document.
 */
export type ResponseBody<Schema extends z.ZodType> = Documented<z.output<Schema>>;
