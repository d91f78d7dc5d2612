/**
 * The group a client address counts in for a per-address limit. An IPv4 address is itself; an
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket shows an IPv4 peer) is
 * that IPv4 address; any other IPv6 address is its /64 (`2001:db8:1:2::/64`): a /64 is what one
 * subscriber or host is handed, and every address in it is theirs to use, so a limit per exact
 * IPv6 address is a limit per however many addresses they care to take. Text that is not an IP
 * address is its own group, unchanged. Pure: no `node:net` (domain/ does no I/O and imports nothing).
 */
export function addressGroup(ip: string): string {
  if (isIPv4(ip)) return ip;
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

const IPV4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => IPV4_PART.test(p));
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail read, a `%zone` dropped), or null. */
function ipv6Groups(text: string): number[] | null {
  const s = text.split('%')[0].toLowerCase();
  if (!s.includes(':')) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const read = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes('.')) {
        if (!isIPv4(p)) return null;
        const [a, b, c, d] = p.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else if (/^[0-9a-f]{1,4}$/.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = read(halves[0]);
  const tail = halves.length === 2 ? read(halves[1]) : [];
  if (!head || !tail) return null;
  // A dotted IPv4 part belongs at the very end only.
  if (halves.length === 2 && halves[0].includes('.')) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}
