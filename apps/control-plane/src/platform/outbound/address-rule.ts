import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses an outbound client may connect to:
 * - `any`: every address (agents, the operator's docs site, and webhooks or collectors when
 *   private networks are allowed);
 * - `public`: only public unicast addresses. The check runs on the address each connection really
 *   goes to, after DNS, so a name that resolved to a public address when it was registered and
 *   points at 127.0.0.1 by delivery time is refused too (DNS rebinding).
 */
export type AddressPolicy = 'any' | 'public';

/**
 * Why an address is not public, or undefined when it is. Only ipaddr.js's `unicast` range is
 * public: loopback, private, link-local, carrier-grade NAT, multicast, reserved and unspecified
 * addresses are not, nor an IPv4-mapped IPv6 spelling of one of them.
 */
export function nonPublicReason(address: string): string | undefined {
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    const inner = (parsed as ipaddr.IPv6).toIPv4Address();
    return `an IPv4-mapped IPv6 address (${inner.toString()}, ${inner.range()})`;
  }
  return `a ${range} address`;
}

/** A connection refused by the `public` policy; no byte was sent. */
export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_ADDRESS_NOT_ALLOWED';
  constructor(address: string, host: string, reason: string) {
    const named = host === address ? address : `${address} (the address of ${host})`;
    super(`connecting to ${named} is not allowed: it is ${reason}, and only public addresses may be called`);
    this.name = 'AddressNotAllowedError';
  }
}

/** The address check for a host given as a literal IP (no DNS lookup runs for those). */
export function checkLiteralHost(host: string): AddressNotAllowedError | undefined {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (!isIP(bare)) return undefined;
  const reason = nonPublicReason(bare);
  return reason === undefined ? undefined : new AddressNotAllowedError(bare, bare, reason);
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * dns.lookup, refusing a name when any address it resolves to is not public (the connection would
 * otherwise be free to pick that one). Given to net/tls.connect, so it runs for every connection.
 */
export function publicOnlyLookup(
  hostname: string,
  options: LookupOptions | LookupAllOptions,
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
    if (error) {
      callback(error, options.all ? [] : '');
      return;
    }
    for (const { address } of addresses) {
      const reason = nonPublicReason(address);
      if (reason !== undefined) {
        callback(new AddressNotAllowedError(address, hostname, reason), options.all ? [] : '');
        return;
      }
    }
    if (options.all) callback(null, addresses);
    else {
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    }
  });
}
