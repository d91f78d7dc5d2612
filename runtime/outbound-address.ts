import dns from 'node:dns';
import net from 'node:net';

/**
 * Where a tenant-supplied URL may lead. The worker fetches it from inside the operator's
 * network, so private, loopback, link-local and other special-purpose addresses are refused
 * unless the operator allows them (`OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=1`). The check
 * runs on the addresses the connection actually uses (the lookup hook below), so a name that
 * resolves to a public address when saved and a private one later is still refused.
 */
// Two lists: a BlockList checks an IPv4 address against its IPv6 rules too (as IPv4-mapped), and
// ::ffff:0:0/96 below must refuse mapped addresses without refusing every IPv4 one.
const BLOCKED4 = new net.BlockList();
const BLOCKED6 = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED4.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) BLOCKED6.addSubnet(net6, prefix, 'ipv6');

export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  return family === 4 ? BLOCKED4.check(address, 'ipv4') : BLOCKED6.check(address, 'ipv6');
}

/** The address was refused: not retried (the delivery fails with this reason). */
export class AddressRefused extends Error {
  constructor(host: string, address: string) {
    super(`refused: ${host} resolves to ${address}, a private, loopback or link-local address (OUTBOUND_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES is off)`);
    this.name = 'AddressRefused';
  }
}

/** An IP literal in the URL is never looked up, so it is checked before connecting. */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) && isPrivateAddress(host)) throw new AddressRefused(host, host);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses what resolves to a blocked address. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const bad = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(new AddressRefused(hostname, bad.address) as NodeJS.ErrnoException, '');
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
