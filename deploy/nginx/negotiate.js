/**
 * Content negotiation and problem documents for the static docs site under nginx (njs).
 *
 * Why this is written by hand: njs runs inside nginx, which has no package manager and cannot load
 * the `negotiator` package the Node front server uses, and nginx's own `map` matches the Accept
 * header as text and cannot weigh q-values. So this file implements the same proactive negotiation
 * (RFC 9110 §12.5.1) with the same tie-breaking as the front server (apps/docs/server/http/accept.ts),
 * and tests/deploy/static-hosting.test.ts holds the two to the same answers over a table of
 * Accept headers.
 */

/** The representations of a documentation page, in server preference order (HTML wins ties). */
const PAGE_OFFERS = ['text/html', 'text/markdown'];

/** The representations of a 404, in server preference order: the problem document wins ties. */
const NOT_FOUND_OFFERS = ['application/problem+json', 'application/json', 'text/html'];

/** An Accept header that names no `type/subtype` at all says nothing a server can honour. */
const MEDIA_RANGE = /(?:^|,)\s*[^\s,;/"]+\/[^\s,;/"]+\s*(?:;|,|$)/;

/** One member of an Accept header: `type/subtype;param=value;q=0.5`. */
const MEMBER = /^\s*([^\s/;]+)\/([^;\s]+)\s*(?:;(.*))?$/;

/** Splits on `separator` outside double quotes (a quoted parameter value may hold it). */
function splitOutsideQuotes(text, separator) {
  const parts = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/**
 * The media ranges of an Accept header, in the order the client listed them. Parameters after `q`
 * are accept-extensions, not media-type parameters, and are ignored.
 */
function parseAccept(header) {
  const ranges = [];
  const members = splitOutsideQuotes(header, ',');
  for (let index = 0; index < members.length; index++) {
    const match = MEMBER.exec(members[index].trim());
    if (!match) continue;
    const params = {};
    let q = 1;
    const rawParams = match[3] ? splitOutsideQuotes(match[3], ';') : [];
    for (let p = 0; p < rawParams.length; p++) {
      const pair = rawParams[p].trim();
      const at = pair.indexOf('=');
      const name = (at < 0 ? pair : pair.slice(0, at)).toLowerCase();
      let value = at < 0 ? undefined : pair.slice(at + 1);
      if (value && value.length > 1 && value[0] === '"' && value[value.length - 1] === '"')
        value = value.slice(1, -1);
      if (name === 'q') {
        // parseFloat reads a leading number and gives NaN for none: NaN accepts nothing.
        q = Number.parseFloat(value);
        break;
      }
      params[name] = value;
    }
    ranges.push({ type: match[1].toLowerCase(), subtype: match[2].toLowerCase(), params, q, index });
  }
  return ranges;
}

/**
 * How a range applies to an offer: undefined when it does not match, else its q, its position in
 * the header and its specificity (type 4, subtype 2, parameters 1). Every offer is sent as UTF-8
 * text, so it is matched with `charset=utf-8`, as the front server does.
 */
function matchRange(offer, range) {
  const slash = offer.indexOf('/');
  const type = offer.slice(0, slash);
  const subtype = offer.slice(slash + 1);
  let specificity = 0;
  if (range.type === type) specificity += 4;
  else if (range.type !== '*') return undefined;
  if (range.subtype === subtype) specificity += 2;
  else if (range.subtype !== '*') return undefined;
  const names = Object.keys(range.params);
  if (names.length > 0) {
    const offerParams = { charset: 'utf-8' };
    for (let n = 0; n < names.length; n++) {
      const name = names[n];
      const wanted = range.params[name];
      if (wanted === '*') continue;
      if ((wanted || '').toLowerCase() !== (offerParams[name] || '').toLowerCase()) return undefined;
    }
    specificity += 1;
  }
  return { q: range.q, order: range.index, specificity };
}

/**
 * Picks the offer to send, or undefined when the client accepts none. Each offer takes the q of
 * its most specific matching range (a later range of the same specificity and q wins, which only
 * matters for the order below); offers with q 0 are out; the rest are ordered by q, then by how
 * specific the match was, then by the order the client listed the ranges, then by the server's
 * order. An absent or blank header, or one that names no media range, accepts anything.
 */
function negotiate(header, offers) {
  if (header === undefined || !MEDIA_RANGE.test(header)) return offers[0];
  const ranges = parseAccept(header);
  let best;
  for (let server = 0; server < offers.length; server++) {
    let chosen;
    for (let r = 0; r < ranges.length; r++) {
      const match = matchRange(offers[server], ranges[r]);
      if (!match) continue;
      if (
        !chosen ||
        match.specificity > chosen.specificity ||
        (match.specificity === chosen.specificity &&
          (match.q > chosen.q || (match.q === chosen.q && match.order > chosen.order)))
      )
        chosen = match;
    }
    if (!chosen || !(chosen.q > 0)) continue;
    chosen.server = server;
    if (
      !best ||
      chosen.q > best.q ||
      (chosen.q === best.q &&
        (chosen.specificity > best.specificity ||
          (chosen.specificity === best.specificity && chosen.order < best.order)))
    )
      best = chosen;
  }
  return best ? offers[best.server] : undefined;
}

/**
 * The Accept header as the front server reads it: Node joins repeated Accept fields with ", ",
 * where nginx's `$http_accept` would give only the first.
 */
function acceptOf(r) {
  const values = [];
  // njs 0.7 (Debian 12) has no for-of: plain index loops throughout.
  const raw = r.rawHeadersIn;
  for (let i = 0; i < raw.length; i++) if (raw[i][0].toLowerCase() === 'accept') values.push(raw[i][1]);
  return values.length === 0 ? undefined : values.join(', ');
}

/** `js_set $docs_page_choice`: `html`, `markdown` or `none` (406) for a documentation page. */
function page(r) {
  const chosen = negotiate(acceptOf(r), PAGE_OFFERS);
  return chosen === 'text/html' ? 'html' : chosen === 'text/markdown' ? 'markdown' : 'none';
}

/**
 * `js_set $docs_not_found_choice`: `html` (the site's 404 page) only when the client ranks HTML
 * above JSON, as browsers do; no Accept, `*\/*` and unknown types get the problem document.
 */
function notFound(r) {
  return negotiate(acceptOf(r), NOT_FOUND_OFFERS) === 'text/html' ? 'html' : 'problem';
}

/** The catalogue entries (packages/shared/src/problem.ts) of the codes this configuration answers. */
const PROBLEMS = {
  400: {
    code: 'invalid_request',
    title: 'Invalid request',
    resolution:
      'Correct the value named in detail (see the endpoint reference for bounds) and send the request again.',
    detail: () => 'The request target is not a valid path.',
  },
  404: {
    code: 'not_found',
    title: 'Not found',
    resolution: 'Check the path or identifier; available_endpoints lists what this server answers.',
    detail: (path) => `Nothing is published at ${path}.`,
  },
  405: {
    code: 'method_not_allowed',
    title: 'Method not allowed',
    resolution: 'Use one of the methods listed in the Allow header.',
    detail: (path) => `${path} answers GET and HEAD only.`,
  },
  406: {
    code: 'not_acceptable',
    title: 'Not acceptable',
    resolution: 'Send Accept: text/html or Accept: text/markdown (or omit Accept).',
    detail: (path) => `${path} is available as text/html or text/markdown.`,
  },
  413: {
    code: 'payload_too_large',
    title: 'Payload too large',
    resolution: 'Send a smaller body; the limit is given in detail.',
    detail: (path) =>
      `The request body is larger than ${path} accepts here (client_max_body_size of nginx, 1 MiB unless its operator changed it).`,
  },
  502: {
    code: 'upstream_unavailable',
    title: 'Upstream unavailable',
    resolution: 'A dependency could not be reached or loaded; retry shortly, and check the service it names.',
    detail: (path) => `The docs front server did not answer for ${path}.`,
  },
  503: {
    code: 'service_unavailable',
    title: 'Service unavailable',
    resolution:
      'The site API, share permalinks and publishing need the docs front server; this host serves the static build only (see /docs/operations/static-hosting).',
    detail: (path) => `${path} is answered by the docs front server, which this deployment does not run.`,
  },
};

/**
 * `js_content` of the internal problem locations (`/_docs-problem/<status>`): the same problem
 * document the front server sends for that status, for the path the client asked for. JSON.stringify
 * escapes whatever the path holds.
 */
function problem(r) {
  const status = Number(r.uri.slice(r.uri.lastIndexOf('/') + 1));
  const entry = PROBLEMS[status];
  // A target nginx could not parse (400) leaves $request_uri empty; the request line ($request) has it.
  const requested = r.variables.request_uri || (r.variables.request || '').split(' ')[1] || '/';
  const raw = requested.split('?')[0];
  // Cap what is echoed back, as the front server does: an instance is a pointer, not a mirror.
  const instance = raw.length > 2048 ? `${raw.slice(0, 2048)}…` : raw;
  const site =
    r.variables.docs_site_url || `${r.variables.scheme}://${r.variables.http_host || r.variables.host}`;
  const url = `${site.replace(/\/+$/, '')}/docs/reference/errors#${entry.code}`;
  const body = {
    type: url,
    title: entry.title,
    status,
    detail: entry.detail(raw.slice(0, 200)),
    instance,
    code: entry.code,
    resolution: entry.resolution,
    documentation_url: url,
  };
  r.headersOut['Content-Type'] = 'application/problem+json; charset=utf-8';
  r.headersOut['Cache-Control'] = 'no-store';
  // The answer to a page or a missing path depends on Accept (406, and the 404 page for browsers).
  if (status === 404 || status === 406) r.headersOut['Vary'] = 'Accept';
  if (status === 405) r.headersOut['Allow'] = 'GET, HEAD';
  r.return(status, JSON.stringify(body));
}

export default { page, notFound, problem, negotiate };
