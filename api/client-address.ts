import net from 'node:net';
import type Koa from 'koa';

function bare(addr: string): string {
  // IPv4 peers of a dual-stack socket arrive as ::ffff:a.b.c.d.
  return addr.startsWith('::ffff:') && net.isIPv4(addr.slice(7)) ? addr.slice(7) : addr;
}

/** TRUSTED_PROXIES entries: an address ("10.0.0.5", "::1") or a CIDR range ("10.0.0.0/8"). */
export function trustList(entries: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const type = net.isIPv6(addr) ? 'ipv6' : net.isIPv4(addr) ? 'ipv4' : undefined;
    if (!type) throw new Error(`TRUSTED_PROXIES: "${e}" is not an IP address or CIDR range`);
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return list;
}

/** Whether a peer address (IPv4-mapped or not) is one of the TRUSTED_PROXIES. */
export function isTrusted(list: net.BlockList, addr: string): boolean {
  const a = bare(addr);
  const type = net.isIPv6(a) ? 'ipv6' : net.isIPv4(a) ? 'ipv4' : undefined;
  return type !== undefined && list.check(a, type);
}

/**
 * Who the client is, for rate limits and logs, and whether it came over TLS (Secure cookies).
 * Koa's `app.proxy` believes X-Forwarded-* from anyone, so a new X-Forwarded-For value would be
 * a new "address" with a fresh limit. Here they are believed only from a configured proxy:
 * the client is the right-most X-Forwarded-For hop that is not itself a trusted proxy (hops
 * further left were written by the client and can say anything).
 */
export function clientAddress(trustedProxies: string[]): Koa.Middleware {
  const list = trustList(trustedProxies);
  // No proxy trusted (the default): the peer is the client, and no request needs the list's
  // check, which parses the address anew on every request.
  const anyTrusted = trustedProxies.length > 0;
  return async (ctx, next) => {
    const peer = bare(ctx.req.socket.remoteAddress ?? '');
    let ip = peer;
    if (anyTrusted && isTrusted(list, peer)) {
      const hops = (ctx.get('X-Forwarded-For') || '')
        .split(',')
        .map((h) => bare(h.trim()))
        .filter(Boolean);
      while (hops.length > 0) {
        ip = hops.pop()!;
        if (!isTrusted(list, ip)) break;
      }
      const proto = ctx.get('X-Forwarded-Proto').split(',')[0].trim().toLowerCase();
      if (proto === 'https' || proto === 'http') Object.defineProperty(ctx.request, 'protocol', { value: proto });
    }
    ctx.request.ip = ip;
    await next();
  };
}
