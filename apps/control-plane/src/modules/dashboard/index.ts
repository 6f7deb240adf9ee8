/** The web dashboard's static files at /ui/ and where they are found. */
export { defaultDashboardDir } from './locate.ts';
export { DASHBOARD_CSP, DASHBOARD_PREFIX, dashboardMiddleware } from './routes.ts';
export { dashboardSettings } from './settings.ts';
