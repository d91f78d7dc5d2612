import dns from 'node:dns';
import net from 'node:net';

/**
 * Where a URL a tenant (or a provider payload, or a pasted credential) can influence may lead.
 * The service fetches it from inside the operator's network, so private, loopback, link-local
 * and other special-purpose addresses are refused unless the caller's policy allows them. The
 * check runs on the addresses the connection actually uses (the lookup hook below), so a name
 * that resolves to a public address when saved and a private one later is still refused.
 *
 * IPv6 forms that carry an IPv4 address inside (IPv4-compatible, -mapped and -translated,
 * NAT64, 6to4, Teredo) are judged by that IPv4 address too: a router or relay on the way may
 * turn them into it.
 */
// Two lists: a BlockList checks an IPv4 address against its IPv6 rules too (as IPv4-mapped), and
// ::ffff:0:0/96 below must refuse mapped addresses without refusing every IPv4 one.
const BLOCKED4 = new net.BlockList();
const BLOCKED6 = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED4.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED6.addSubnet(net6, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (net.isIP already said it is one). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.split('%')[0];
  const bytes = new Uint8Array(16);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (dotted) {
    tail = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right].map((g) => parseInt(g, 16));
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  if (tail.length) bytes.set(tail, 12);
  return bytes;
}

const v4 = (b: Uint8Array, at: number, xor = 0) => [0, 1, 2, 3].map((i) => b[at + i] ^ xor).join('.');
const startsWith = (b: Uint8Array, prefix: number[]) => prefix.every((x, i) => b[i] === x);

/** The IPv4 addresses an IPv6 address carries, by the well-known embeddings. */
function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  const zeros = (n: number) => Array(n).fill(0) as number[];
  const out: string[] = [];
  if (startsWith(b, zeros(12))) out.push(v4(b, 12)); // ::a.b.c.d (IPv4-compatible)
  if (startsWith(b, [...zeros(10), 0xff, 0xff])) out.push(v4(b, 12)); // ::ffff:a.b.c.d (mapped)
  if (startsWith(b, [...zeros(8), 0xff, 0xff, 0, 0])) out.push(v4(b, 12)); // ::ffff:0:a.b.c.d (translated)
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, ...zeros(8)])) out.push(v4(b, 12)); // 64:ff9b::/96 (NAT64)
  if (startsWith(b, [0x20, 0x02])) out.push(v4(b, 2)); // 2002::/16 (6to4)
  // 2001::/32 (Teredo: server, client obfuscated)
  if (startsWith(b, [0x20, 0x01, 0, 0])) out.push(v4(b, 4), v4(b, 12, 0xff));
  return out;
}

export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 4) return BLOCKED4.check(address, 'ipv4');
  if (BLOCKED6.check(address, 'ipv6')) return true;
  return embeddedIpv4(address).some((inner) => BLOCKED4.check(inner, 'ipv4'));
}

/**
 * The address was refused: not retried. The message names neither the host's addresses nor
 * anything about them beyond the class: a tenant could otherwise resolve internal names
 * through us. `address` is kept for the operator's logs.
 */
export class AddressRefused extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super('refused: the destination is a private, loopback, link-local or reserved address');
    this.name = 'AddressRefused';
  }
}

/** An IP literal in the URL is never looked up, so it is checked before connecting. */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) && isPrivateAddress(host)) throw new AddressRefused(host, host);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

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
