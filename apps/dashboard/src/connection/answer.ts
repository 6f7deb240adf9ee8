import { type FetchResult, unwrap } from '@switchyard/client';

/**
 * unwrap() with the data's type narrowed: openapi-fetch's result union makes `unwrap` infer
 * `T | undefined`, although a successful answer always has data. Behaviour is unwrap's own.
 */
export async function answer<T>(result: Promise<FetchResult<T>>): Promise<NonNullable<T>> {
  return (await unwrap(result)) as NonNullable<T>;
}
