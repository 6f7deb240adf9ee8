/**
 * URLs the control plane calls on an agent (health probe, shutdown notice, and later execute and
 * cancel), built with the URL API from the registered `base_url`: the base path is kept, every
 * segment is percent-encoded, and whatever a URL could carry besides an origin and a path is
 * dropped. Registration refuses base URLs with a query, a fragment or credentials; dropping them
 * here as well keeps instances registered before that check from turning `GET /health` into
 * `GET /admin?x=1/health`.
 */
export function agentUrl(baseUrl: string, ...segments: string[]): string {
  const url = new URL(baseUrl);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  const encoded = segments.map((segment) => {
    // The URL parser resolves `.` and `..` (also spelled %2e) as dot segments, which would climb
    // out of the agent's base path: no caller has a reason to send one.
    if (segment === '' || /^(\.|%2e){1,2}$/i.test(segment)) {
      throw new RangeError(`"${segment}" is not a path segment an agent URL may contain`);
    }
    return encodeURIComponent(segment);
  });
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${encoded.join('/')}`;
  return url.href;
}
