import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiProblem, createSwitchyardClient, unwrap } from '../src/index.ts';
import { startControlPlane, type TestControlPlane } from './helpers/control-plane.ts';
import { recordStream } from './helpers/stream-recorder.ts';

const API_KEY = 'client-test-key-0123456789';
let cp: TestControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ apiKey: API_KEY });
});

afterAll(async () => {
  await cp?.close();
});

async function problemOf(promise: Promise<unknown>): Promise<ApiProblem> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiProblem);
  return error as ApiProblem;
}

describe('API key', () => {
  it('is sent as X-API-Key on every call when given', async () => {
    const sent: Array<string | null> = [];
    const client = createSwitchyardClient({
      baseUrl: cp.url,
      apiKey: API_KEY,
      fetch: (input, init) => {
        sent.push(new Request(input, init).headers.get('x-api-key'));
        return fetch(input, init);
      },
    });
    const page = await unwrap(client.GET('/api/v1/executions'));
    expect(page.executions).toEqual(expect.any(Array));
    await unwrap(client.GET('/api/ui/v1/nodes'));
    expect(sent).toEqual([API_KEY, API_KEY]);
  });

  it('gives a 401 ApiProblem for a wrong key', async () => {
    const client = createSwitchyardClient({ baseUrl: cp.url, apiKey: 'wrong-key' });
    const problem = await problemOf(unwrap(client.GET('/api/v1/executions')));
    expect(problem.status).toBe(401);
    expect(problem.code).toBe('unauthorized');
    expect(problem.detail).toEqual(expect.any(String));
    expect(problem.resolution).toEqual(expect.any(String));
  });

  it('gives a 401 ApiProblem without a key', async () => {
    const client = createSwitchyardClient({ baseUrl: cp.url });
    const problem = await problemOf(unwrap(client.GET('/api/ui/v1/nodes')));
    expect(problem.status).toBe(401);
    expect(problem.code).toBe('unauthorized');
  });

  it('lets a stream with the right key go live, the key in a header and not in the URL', async () => {
    const stream = recordStream({ baseUrl: cp.url, path: '/api/ui/v1/executions/events', apiKey: API_KEY });
    await stream.untilState('live');
    stream.handle.close();
    await stream.handle.done;
    expect(stream.requests[0]!.headers.get('x-api-key')).toBe(API_KEY);
    expect(stream.requests[0]!.url).not.toContain(API_KEY);
  });

  it('ends a stream with a wrong key at once: one request, a final 401 ApiProblem, no retry loop', async () => {
    const stream = recordStream({
      baseUrl: cp.url,
      path: '/api/ui/v1/executions/events',
      apiKey: 'wrong-key',
    });
    await stream.handle.done;
    // Long enough for a retry to have happened, had the stream scheduled one.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    expect(stream.requests).toHaveLength(1);
    expect(stream.states).toEqual(['connecting', 'closed']);
    expect(stream.errors).toHaveLength(1);
    expect(stream.errors[0]!.retrying).toBe(false);
    expect(stream.errors[0]!.error.status).toBe(401);
    expect(stream.errors[0]!.error.code).toBe('unauthorized');
  });
});
