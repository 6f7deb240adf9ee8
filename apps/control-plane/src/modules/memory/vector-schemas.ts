import { z } from 'zod';
import { nullable } from '../../platform/nullable.ts';
import { KeySchema, ScopeFields } from './schemas.ts';

/** Results a search returns: the default and the most it may ask for. */
export const DEFAULT_TOP_K = 10;
export const MAX_TOP_K = 100;

/** Largest metadata of a vector, as JSON text in bytes; larger answers 413. */
export const MAX_METADATA_BYTES = 64 * 1024;

/**
 * Shortest and longest embedding (Euclidean length). pgvector compares vectors in 4-byte floats,
 * squares and all: beyond about 1.8e19 a squared length overflows, below about 1e-19 it vanishes,
 * and the search ranks such a vector wrongly (as if unrelated to every query) where exact search,
 * in doubles, does not. Within these bounds squared lengths and the products that make them up
 * stay normal float4 numbers at every dimension up to 16,000, so pgvector's distances are exact
 * search's up to 4-byte rounding.
 */
const MIN_LENGTH = 1e-15;
const MAX_LENGTH = 1e15;

/**
 * Checks an embedding and rounds it to what the database keeps: `real` (float4) numbers. The
 * first offending number is named alone, so an embedding of 16,000 strings answers with one error
 * instead of 16,000. A number is refused when float4 rounding makes it infinite (beyond about
 * ±3.4028235e38: PostgreSQL would refuse it as out of range); a number too small for a float4
 * becomes 0, as PostgreSQL's `real` would not accept it either (it refuses underflow), so the
 * rounded value is what is sent. All zeros has no direction, so cosine similarity with it is
 * undefined. The length must lie within MIN_LENGTH and MAX_LENGTH (see there).
 */
function embeddingOf(maxDimensions: number) {
  return (value: unknown, ctx: z.core.$RefinementCtx<unknown>): number[] => {
    const refuse = (message: string, path: number[] = []) => {
      ctx.addIssue({ code: 'custom', message, path });
      return z.NEVER;
    };
    if (!Array.isArray(value)) return refuse('must be an array of numbers');
    if (value.length === 0) return refuse('must have at least one number');
    if (value.length > maxDimensions) {
      return refuse(`has ${value.length} numbers; at most ${maxDimensions} (memory.max_vector_dimensions)`);
    }
    const rounded = new Array<number>(value.length);
    let direction = false;
    let squares = 0;
    for (let i = 0; i < value.length; i++) {
      const x = value[i];
      if (typeof x !== 'number' || !Number.isFinite(Math.fround(x))) {
        const shown = JSON.stringify(x) ?? String(x);
        return refuse(
          `must be a finite number a float4 can hold (|x| ≤ 3.4028235e38); got ${shown.slice(0, 40)}`,
          [i],
        );
      }
      rounded[i] = Math.fround(x);
      if (rounded[i] !== 0) direction = true;
      squares += Math.fround(x) ** 2;
    }
    if (!direction) {
      return refuse('has no direction: every number is 0 (or too small for a float4)');
    }
    const length = Math.sqrt(squares);
    if (length < MIN_LENGTH || length > MAX_LENGTH) {
      return refuse(
        `has length ${length.toPrecision(3)} (the square root of the sum of squares); it must be 1e-15 to 1e15, which 4-byte floats can compare`,
      );
    }
    return rounded;
  };
}

/**
 * An embedding as a request carries it; parsed into float4-rounded numbers. Documented as the
 * array of numbers it is (the parsing itself is a transform, which OpenAPI cannot show).
 */
function embeddingSchema(maxDimensions: number, description: string) {
  return z
    .unknown()
    .transform(embeddingOf(maxDimensions))
    .meta({
      description,
      override: { type: 'array', items: { type: 'number' }, minItems: 1, maxItems: maxDimensions },
    });
}

/**
 * A JSON object passed through as parsed: zod's record rebuilds the object and drops a
 * `"__proto__"` member on the way, which would lose it from metadata and empty a filter of it.
 */
const JsonObject = z
  .custom<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    { message: 'Invalid input: expected object' },
  )
  .meta({ type: 'object', additionalProperties: {} });

/** Metadata: any JSON object. Size and storability are the service's to check (413 and 400). */
const MetadataSchema = JsonObject.meta({
  description: `Any JSON object, at most ${MAX_METADATA_BYTES / 1024} KiB as JSON; \`{}\` when absent. Replaced whole by every store.`,
  example: { title: 'Q3 report', content: 'Revenue grew 12 %.', source: 'finance' },
});

const TopKSchema = z
  .int()
  .min(1)
  .max(MAX_TOP_K)
  .meta({ description: `Most results, 1 to ${MAX_TOP_K}; ${DEFAULT_TOP_K} when absent.` });

const ThresholdSchema = z
  .number()
  .min(-1)
  .max(1)
  .meta({ description: 'Lowest score a result may have (cosine similarity, -1 to 1); none when absent.' });

/** The two name sets of a search: SDKs send the first, other clients the second. */
const NAME_SETS = [
  ['query_embedding', 'top_k', 'threshold'],
  ['embedding', 'limit', 'min_score'],
] as const;

/** The body schemas of vector memory for one `memory.max_vector_dimensions`. */
function buildVectorSchemas(maxDimensions: number) {
  /** `POST /api/v1/memory/vector` and its alias `POST /api/v1/memory/vector/set`. */
  const StoreBodySchema = z.object({
    key: KeySchema,
    embedding: embeddingSchema(
      maxDimensions,
      `The vector: 1 to ${maxDimensions} finite numbers, not all 0, of length (square root of the sum of squares) 1e-15 to 1e15, stored as float4 (\`real\`). One scope holds vectors of one dimension.`,
    ),
    metadata: nullable(MetadataSchema),
    ...ScopeFields,
  });

  /**
   * `POST /api/v1/memory/vector/search`. Either name set is accepted, never both in one body:
   * a client mixing them most likely means something the other name would not say.
   */
  const SearchBodySchema = z
    .object({
      query_embedding: embeddingSchema(
        maxDimensions,
        'The query vector (or `embedding`). Only stored vectors of its dimension are compared.',
      ).optional(),
      top_k: nullable(TopKSchema),
      threshold: nullable(ThresholdSchema),
      embedding: embeddingSchema(maxDimensions, 'Another name of `query_embedding`.').optional(),
      limit: nullable(TopKSchema.meta({ description: 'Another name of `top_k`.' })),
      min_score: nullable(ThresholdSchema.meta({ description: 'Another name of `threshold`.' })),
      filters: nullable(JsonObject).meta({
        description:
          'Only vectors whose metadata contains this JSON (`metadata @> filters`): `{"source": "finance"}` matches any metadata with that member.',
        example: { source: 'finance' },
      }),
      ...ScopeFields,
    })
    .superRefine((body, ctx) => {
      const used = NAME_SETS.map((names) => names.filter((name) => body[name] !== undefined));
      const [first, second] = used as [string[], string[]];
      if (first.length > 0 && second.length > 0) {
        for (const field of second) {
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: `mixes the two name sets (${first.join(', ')} given too): send query_embedding, top_k and threshold, or embedding, limit and min_score`,
          });
        }
      } else if (body.query_embedding === undefined && body.embedding === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [second.length > 0 ? 'embedding' : 'query_embedding'],
          message: 'is required: the query vector',
        });
      }
    })
    .transform((body) => ({
      embedding: (body.query_embedding ?? body.embedding) as number[],
      topK: body.top_k ?? body.limit ?? DEFAULT_TOP_K,
      threshold: body.threshold ?? body.min_score,
      filters: body.filters,
      scope: body.scope,
      scope_id: body.scope_id,
    }));

  /** `POST /api/v1/memory/vector/delete`: the older delete with a body. */
  const DeleteBodySchema = z.object({ key: KeySchema, ...ScopeFields });

  /** The query of `GET` and `DELETE /api/v1/memory/vector/{key}`. */
  const KeyQuerySchema = z.object({ ...ScopeFields });

  /** The path of `GET` and `DELETE /api/v1/memory/vector/{key}`, decoded by the router. */
  const KeyPathSchema = z.object({
    key: KeySchema.meta({
      description:
        'The key, percent-encoded: a key with `/` is sent as `%2F`. One that is not a valid key (control characters, over 255 characters) answers 400.',
      example: 'doc-42',
    }),
  });

  return { StoreBodySchema, SearchBodySchema, DeleteBodySchema, KeyQuerySchema, KeyPathSchema };
}

export type VectorSchemas = ReturnType<typeof buildVectorSchemas>;
export type StoreBody = z.infer<VectorSchemas['StoreBodySchema']>;
export type SearchRequestBody = z.infer<VectorSchemas['SearchBodySchema']>;

const built = new Map<number, VectorSchemas>();

/**
 * The schemas for a dimension limit, built once per limit: the limit is a setting, and a request
 * over it is refused while parsing, with the field named, like every other field error.
 */
export function vectorSchemas(maxDimensions: number): VectorSchemas {
  let schemas = built.get(maxDimensions);
  if (!schemas) {
    schemas = buildVectorSchemas(maxDimensions);
    built.set(maxDimensions, schemas);
  }
  return schemas;
}
