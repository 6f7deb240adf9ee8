import { DOCS_URL_ENV } from '@switchyard/shared';
import { durationSetting, optionalTextSetting } from '@switchyard/shared/settings';
import { setting, type ValuesOf } from '../../platform/config/setting.ts';

/** An absolute http(s) URL without a trailing slash, or unset. */
function siteUrlSetting() {
  return optionalTextSetting().transform((value, ctx) => {
    if (value === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `"${value}" is not an absolute URL` });
      return undefined;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: `"${value}" is not an http or https URL` });
      return undefined;
    }
    return value.replace(/\/+$/, '');
  });
}

/**
 * Where shared runs are published (config `shares:`). Not read from a stored config: it says
 * where a workflow's inputs and outputs are sent, which only the operator starting the server
 * may decide.
 */
export const shareSettings = {
  docsUrl: setting({
    key: 'shares.docs_url',
    env: DOCS_URL_ENV,
    schema: siteUrlSetting(),
    default: undefined,
    fromDatabase: false,
    meaning:
      'Base URL of the docs site that publishes shared runs (`POST {url}/api/v1/shares`); unset, sharing answers 503. The variable (not the file key) is also the base of `documentation_url` in problems.',
  }),
  publishUrl: setting({
    key: 'shares.publish_url',
    env: 'SWITCHYARD_SHARES_PUBLISH_URL',
    schema: siteUrlSetting(),
    default: undefined,
    fromDatabase: false,
    meaning:
      "Where the control plane reaches the docs site to publish, when its public address (shares.docs_url) is not reachable from the control plane's network, e.g. http://docs:4321 between containers; unset means shares.docs_url.",
  }),
  publishTimeoutMs: setting({
    key: 'shares.publish_timeout',
    env: 'SWITCHYARD_SHARES_PUBLISH_TIMEOUT',
    schema: durationSetting({ min: 100 }),
    default: '10s',
    fromDatabase: false,
    meaning: 'Timeout of one publish to the docs site (connect, send and its answer).',
  }),
};

export type ShareSettings = ValuesOf<typeof shareSettings>;
