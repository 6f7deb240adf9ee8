/** The dashboard's overview: fleet, execution and backlog figures read from the database. */
export { overviewOpenApi } from './openapi.ts';
export { type Overview, readOverview } from './queries.ts';
export { overviewRouter } from './routes.ts';
