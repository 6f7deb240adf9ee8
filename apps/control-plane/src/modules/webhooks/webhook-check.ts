import { lookup as dnsLookup } from 'node:dns/promises';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { isIP } from 'node:net';
import { findUnstorable } from '../../platform/json-storable.ts';
import { nonPublicReason } from '../../platform/outbound/index.ts';
import type { WebhookSettings } from './settings.ts';

/** Where execution outcomes are POSTed, as registered with an async execute request. */
export interface WebhookConfig {
  url: string;
  secret?: string;
  headers: Record<string, string>;
}

export type WebhookCheck =
  | { registered: true; webhook: WebhookConfig }
  | { registered: false; error: string };

/** At most 20 custom headers, each at most 512 characters (name and value alike). */
export const MAX_WEBHOOK_HEADERS = 20;
export const MAX_WEBHOOK_HEADER_LENGTH = 512;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOK_SECRET_LENGTH = 512;

/** How long a submission waits for the webhook host to resolve before refusing the webhook. */
const LOOKUP_TIMEOUT_MS = 2000;

const MEMBERS = new Set(['url', 'secret', 'headers']);

/**
 * Header names a caller may not set: the ones every delivery sets itself (a caller must not
 * forge a signature or a delivery id) and the ones that frame the HTTP message, which would
 * corrupt the request rather than add to it.
 */
const RESERVED_HEADERS = new Set([
  'content-type',
  'user-agent',
  'x-service-signature',
  'x-service-delivery-id',
  'x-service-timestamp',
  'x-service-event',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'proxy-authorization',
]);

/** Resolves a host name to every address it has (tests pass one for names of the public internet). */
export type HostLookup = (hostname: string) => Promise<string[]>;

const systemLookup: HostLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

const plainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A short, printable rendering of a caller's value for an error message. */
const quote = (value: string) => JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);

/** The custom headers, checked; a string is the reason they are refused. */
function checkHeaders(input: unknown): Record<string, string> | string {
  if (input === undefined || input === null) return {};
  if (!plainObject(input)) return 'webhook.headers must be an object of header names to string values';
  const entries = Object.entries(input);
  if (entries.length > MAX_WEBHOOK_HEADERS) {
    return `webhook.headers has ${entries.length} headers; at most ${MAX_WEBHOOK_HEADERS} are allowed`;
  }
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    if (typeof value !== 'string') return `webhook.headers[${quote(name)}] must be a string`;
    if (name.length > MAX_WEBHOOK_HEADER_LENGTH || value.length > MAX_WEBHOOK_HEADER_LENGTH) {
      return `webhook.headers[${quote(name)}]: names and values are at most ${MAX_WEBHOOK_HEADER_LENGTH} characters`;
    }
    // Node's own checks (an RFC 9110 token for the name; no CR, LF or NUL in the value): the
    // same ones http.request applies, so a header accepted here can always be sent.
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      return `webhook.headers[${quote(name)}] is not a valid HTTP header (names are tokens; values may not contain CR, LF or control characters)`;
    }
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower))
      return `webhook.headers may not set ${name}: every delivery sets it itself`;
    if (seen.has(lower)) return `webhook.headers names ${name} twice`;
    seen.add(lower);
  }
  // fromEntries makes own properties, so a header named "__proto__" stays a header.
  return Object.fromEntries(entries) as Record<string, string>;
}

/** The URL, checked for shape; a string is the reason it is refused. */
function checkUrl(input: unknown, settings: WebhookSettings): URL | string {
  if (input === undefined || input === null) return 'webhook.url is required';
  if (typeof input !== 'string') return 'webhook.url must be a string';
  if (input.length > MAX_WEBHOOK_URL_LENGTH) {
    return `webhook.url is ${input.length} characters; at most ${MAX_WEBHOOK_URL_LENGTH} are allowed`;
  }
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return `webhook.url is not an absolute URL: ${quote(input)}`;
  }
  if (url.protocol === 'http:' && !settings.webhookAllowHttp) {
    return 'webhook.url must use https:// (plain http:// is refused unless execution_queue.webhook_allow_http is on)';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `webhook.url must use https:// (got ${url.protocol.slice(0, 20)})`;
  }
  if (url.username || url.password) {
    return 'webhook.url may not contain credentials; send them in webhook.headers or sign with webhook.secret';
  }
  return url;
}

/** Resolves with `fallback` when `promise` takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((done) => {
      timer = setTimeout(() => done(fallback), ms);
    }),
  ]);
}

/**
 * Why the URL's host may not receive webhooks, or undefined when every address it has is public.
 * The rule is the one the outbound client applies when the delivery connects, so what passes
 * here is not refused later for a reason the caller was never told.
 */
async function checkHost(url: URL, lookup: HostLookup): Promise<string | undefined> {
  // WHATWG URL parsing already turned 2130706433 and 0x7f.1 into 127.0.0.1; IPv6 keeps brackets.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host)) {
    const reason = nonPublicReason(host);
    return reason && `webhook.url points at ${reason}; only public addresses receive webhooks`;
  }
  const addresses = await within(
    lookup(host).catch(() => [] as string[]),
    LOOKUP_TIMEOUT_MS,
    undefined,
  );
  if (addresses === undefined) return `webhook.url host ${quote(host)} did not resolve in time`;
  if (addresses.length === 0) return `webhook.url host ${quote(host)} does not resolve`;
  for (const address of addresses) {
    const reason = nonPublicReason(address);
    if (reason) {
      return `webhook.url host ${quote(host)} resolves to ${reason}; only public addresses receive webhooks`;
    }
  }
  return undefined;
}

/**
 * Validates the `webhook` member of an async execute request. Never throws for bad
 * input: the caller still answers 202, with `webhook_registered: false` and `webhook_error` set to
 * `error`. `input` is the raw parsed JSON value, which may be anything. Unless
 * `webhookAllowPrivateNetworks` is on, the host must be public: a literal address is checked as
 * is, a name through DNS (every address it resolves to). Delivery checks the address again when
 * it connects, since a name may resolve differently by then (DNS rebinding).
 */
export async function checkWebhook(
  input: unknown,
  settings: WebhookSettings,
  options: { lookup?: HostLookup } = {},
): Promise<WebhookCheck> {
  try {
    if (!plainObject(input)) {
      return {
        registered: false,
        error: 'webhook must be an object with url, and optionally secret and headers',
      };
    }
    for (const key of Object.keys(input)) {
      if (!MEMBERS.has(key)) {
        return {
          registered: false,
          error: `webhook has an unknown member ${quote(key)} (allowed: url, secret, headers)`,
        };
      }
    }
    const url = checkUrl(input.url, settings);
    if (typeof url === 'string') return { registered: false, error: url };
    const { secret } = input;
    if (secret !== undefined && secret !== null) {
      if (typeof secret !== 'string') return { registered: false, error: 'webhook.secret must be a string' };
      if (secret.length === 0) {
        return { registered: false, error: 'webhook.secret is empty; omit it to send unsigned deliveries' };
      }
      if (secret.length > MAX_WEBHOOK_SECRET_LENGTH) {
        return {
          registered: false,
          error: `webhook.secret is at most ${MAX_WEBHOOK_SECRET_LENGTH} characters`,
        };
      }
      // The secret is kept in the database, which cannot store these (and no signer could agree
      // on the bytes of a lone surrogate).
      if (findUnstorable(secret)) {
        return {
          registered: false,
          error: 'webhook.secret may not contain U+0000 or a lone UTF-16 surrogate',
        };
      }
    }
    const headers = checkHeaders(input.headers);
    if (typeof headers === 'string') return { registered: false, error: headers };
    if (!settings.webhookAllowPrivateNetworks) {
      const refused = await checkHost(url, options.lookup ?? systemLookup);
      if (refused) return { registered: false, error: refused };
    }
    const webhook: WebhookConfig = { url: url.href, headers };
    if (typeof secret === 'string') webhook.secret = secret;
    return { registered: true, webhook };
  } catch {
    // Only a hostile value gets here (a getter that throws, a proxy); plain JSON never does.
    return { registered: false, error: 'webhook could not be read as a JSON object' };
  }
}
