import type Router from '@koa/router';
import type { Database } from '@switchyard/shared/db';
import Koa from 'koa';
import { mountRouters } from './http/fallback.ts';
import { problemMiddleware } from './http/problem-middleware.ts';
import { healthRouter } from './routes/health.ts';
import { createHealthService, storageProbe } from './services/health.ts';
import { VERSION } from './version.ts';

export interface AppDeps {
  db: Database;
  /** Where unexpected errors are reported; defaults to stderr. */
  logError?: (error: unknown, context: string) => void;
}

/** Builds the Koa app from its dependencies. It never listens: server.ts does, tests use callback(). */
export function createApp(deps: AppDeps): Koa {
  const logError = deps.logError ?? ((error, context) => console.error(`[control-plane] ${context}`, error));
  const health = createHealthService({ version: VERSION, probes: { storage: storageProbe(deps.db) } });

  const routers: Router[] = [healthRouter({ health })];

  const app = new Koa();
  app.use(problemMiddleware({ onUnexpected: (error, ctx) => logError(error, `${ctx.method} ${ctx.path}`) }));
  for (const middleware of mountRouters(routers)) app.use(middleware);
  return app;
}
