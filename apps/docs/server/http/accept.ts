/**
 * Proactive content negotiation (RFC 9110 §12.5.1) over a short list of media types the server
 * can produce for one URL.
 */

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
  position: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** Parses an Accept header; malformed members are skipped, as RFC 9110 lets a server do. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  let position = 0;
  for (const member of header.split(',')) {
    const [mediaRange = '', ...params] = member.split(';');
    const [type, subtype, extra] = mediaRange.trim().toLowerCase().split('/');
    if (!type || !subtype || extra !== undefined || !TOKEN.test(type) || !TOKEN.test(subtype)) continue;
    if (type === '*' && subtype !== '*') continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const [name, value] = param.split('=').map((s) => s.trim().toLowerCase());
      if (name !== 'q') continue;
      // RFC 9110 qvalue: 0 to 1 with at most three decimals.
      if (!value || !/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) valid = false;
      else q = Number(value);
    }
    if (valid) ranges.push({ type, subtype, q, position: position++ });
  }
  return ranges;
}

function specificity(range: MediaRange): number {
  if (range.type === '*') return 0;
  if (range.subtype === '*') return 1;
  return 2;
}

function matches(range: MediaRange, type: string, subtype: string): boolean {
  return (range.type === '*' || range.type === type) && (range.subtype === '*' || range.subtype === subtype);
}

/**
 * Picks the representation to send. `offers` are in server preference order (the first wins
 * ties). Returns undefined when the client accepts none of them. An absent header, or one with
 * no parseable member, accepts anything.
 *
 * For each offer the most specific matching range decides its q (so `text/*;q=0, text/html`
 * still accepts HTML). Among offers with the highest q, an offer named exactly beats one reached
 * through a wildcard (`text/markdown, *\/*` means markdown), then the one the client listed
 * first, then the server's order.
 */
export function negotiate<T extends string>(header: string | undefined, offers: readonly T[]): T | undefined {
  if (header === undefined || header.trim() === '') return offers[0];
  const ranges = parseAccept(header);
  if (ranges.length === 0) return offers[0];
  let best: { offer: T; q: number; specificity: number; position: number; order: number } | undefined;
  offers.forEach((offer, order) => {
    const [type = '', subtype = ''] = offer.split('/');
    let chosen: MediaRange | undefined;
    for (const range of ranges) {
      if (!matches(range, type, subtype)) continue;
      if (
        !chosen ||
        specificity(range) > specificity(chosen) ||
        (specificity(range) === specificity(chosen) && range.q < chosen.q)
      ) {
        chosen = range;
      }
    }
    if (!chosen || chosen.q === 0) return;
    const candidate = {
      offer,
      q: chosen.q,
      specificity: specificity(chosen),
      position: chosen.position,
      order,
    };
    if (
      !best ||
      candidate.q > best.q ||
      (candidate.q === best.q && candidate.specificity > best.specificity) ||
      (candidate.q === best.q &&
        candidate.specificity === best.specificity &&
        candidate.position < best.position)
    ) {
      best = candidate;
    }
  });
  return best?.offer;
}
