/**
 * One timestamp for every artifact of a build. SOURCE_DATE_EPOCH (seconds) pins it for
 * reproducible builds; otherwise it is the moment the build started.
 */
export const generatedAt = (() => {
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  return Number.isFinite(epoch) && epoch > 0
    ? new Date(epoch * 1000).toISOString()
    : new Date().toISOString();
})();

export const SITE_NAME = 'Switchyard';
export const SITE_SUMMARY =
  'Switchyard is an open-source control plane that runs AI agents as HTTP services: agents register ' +
  'as nodes, expose reasoners and skills, and are called, chained into workflows, given memory and ' +
  'put behind approvals through one API.';
/** Where the plugin manifest sends people; set DOCS_CONTACT_EMAIL for a deployment. */
export const CONTACT_EMAIL = process.env.DOCS_CONTACT_EMAIL ?? 'maintainers@switchyard.dev';
export const LICENSE = 'Apache-2.0';
/** The project's source repository on GitHub: "Edit this page" links and the footer point here. */
export const REPOSITORY_URL = 'https://github.com/switchyard-dev/switchyard';
/** The branch whose files "Edit this page" opens. */
export const REPOSITORY_BRANCH = 'main';

/** Absolute URL of a site path, from SITE_URL. */
export function absolute(site: string, path: string): string {
  return `${site}${path.startsWith('/') ? path : `/${path}`}`;
}
