import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/*
 * Where a webhook may go (docs/api/events.md, "Outbound safety"): http(s) only, and never to a
 * private, loopback, link-local or otherwise internal address unless the operator allowed it
 * (WEBHOOK_ALLOWED_ADDRESSES). The check runs on the addresses a name resolves to at connect time,
 * inside the connection's own lookup, so a name that resolves elsewhere between checks gains nothing.
 */

// Filled once below and never changed after: the address ranges are the same for every process.
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

export class OutboundPolicy {
  readonly #allowed = new BlockList();

  constructor(allowed: readonly string[]) {
    for (const entry of allowed) {
      const [address = '', prefix] = entry.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.#allowed.addAddress(address, family);
      else this.#allowed.addSubnet(address, Number(prefix), family);
    }
  }

  /** Why this address may not be reached, or undefined when it may. */
  refusal(address: string): string | undefined {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const plain = mapped ?? address;
    const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
    if (!INTERNAL.check(plain, family) || this.#allowed.check(plain, family)) return undefined;
    return `address ${plain} is private, loopback or link-local (allow it with WEBHOOK_ALLOWED_ADDRESSES)`;
  }

  /** Why a subscription's URL can never be reached (scheme, form, literal address), or undefined. */
  urlProblem(text: string): string | undefined {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return 'must be an absolute http or https URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return isIP(host) === 0 ? undefined : this.refusal(host);
  }

  /** A `lookup` for http.request: resolves, then refuses the connection if any address is internal. */
  readonly lookup = (
    hostname: string,
    options: object,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const refusal = this.refusal(address);
        if (refusal) return callback(Object.assign(new Error(refusal), { code: 'EREFUSEDADDRESS' }), []);
      }
      const all = (options as { all?: boolean }).all === true;
      const first = addresses[0];
      if (all) return callback(null, addresses);
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}
