/**
 * RFC 9112 §3.2.2: a server MUST accept the absolute form of a request target
 * (`GET http://host/path?query HTTP/1.1`), which proxies and some clients send.
 */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#\s]+/i;

/**
 * The origin form (`/path?query`) of a request target. Absolute-form targets lose their scheme
 * and authority; the rest is kept as sent, dot segments unresolved, so the same path rules apply
 * to both forms. Undefined for any other target (`*`, authority form, garbage).
 */
export function originForm(rawTarget: string): string | undefined {
  if (rawTarget.startsWith('/')) return rawTarget;
  const authority = ABSOLUTE_FORM.exec(rawTarget);
  if (!authority) return undefined;
  const rest = rawTarget.slice(authority[0].length);
  if (rest === '') return '/';
  return rest.startsWith('/') ? rest : `/${rest}`;
}
