import type { IncomingMessage, ServerResponse } from 'node:http';

/** What an API handler gets for one request. */
export interface ApiContext {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  /** Public base URL of the site, without a trailing slash. */
  site: string;
}

/** Answers one request, or throws a ProblemError that the front server renders. */
export type ApiHandler = (ctx: ApiContext) => void | Promise<void>;
