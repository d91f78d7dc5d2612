/**
 * Which allowance a client address draws from: the one rule every address-keyed limit uses
 * (the client endpoints' address and registration buckets, `wait_for=premium` slots, dashboard
 * login and sign-up limits; docs/limits.md).
 *
 * - IPv4: the address itself (`203.0.113.7`).
 * - IPv4-mapped IPv6 (`::ffff:203.0.113.7`, `::ffff:cb00:7107`): the IPv4 inside, so a dual-stack
 *   socket and an IPv4 one give the same key.
 * - Any other IPv6: its /64 (`2001:db8:0:1::/64`). One subscriber line or host is routinely given
 *   a whole /64 and picks addresses in it at will, so a per-address key would give one client
 *   2^64 fresh allowances.
 *
 * Every spelling of one address (upper case, leading zeros, `::` anywhere, a zone id, brackets)
 * gives the same key. Anything that is not an IP address (a misconfigured proxy's header) is
 * its own key, trimmed and lower-cased, at most 100 characters.
 */
export function clientAddressKey(address: string): string {
  const a = address.trim().toLowerCase();
  const v4 = parseIPv4(a);
  if (v4) return v4.join('.');
  const v6 = parseIPv6(a);
  if (!v6) return a.slice(0, 100);
  if (isIPv4Mapped(v6)) return [v6[6] >> 8, v6[6] & 0xff, v6[7] >> 8, v6[7] & 0xff].join('.');
  return `${v6
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

/** `::ffff:0:0/96`: an IPv4 address carried in IPv6 (what a dual-stack socket reports for an IPv4 peer). */
function isIPv4Mapped(h: number[]): boolean {
  return h[0] === 0 && h[1] === 0 && h[2] === 0 && h[3] === 0 && h[4] === 0 && h[5] === 0xffff;
}

const DEC_OCTET = /^(?:0|[1-9]\d{0,2})$/;

/** Dotted-quad IPv4 (no leading zeros, which some parsers read as octal): its four octets, or null. */
function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (DEC_OCTET.test(p) ? Number(p) : NaN));
  return octets.every((o) => o <= 255) ? octets : null;
}

const HEXTET = /^[0-9a-f]{1,4}$/;

/** An IPv6 address (RFC 4291 text forms, optional brackets and zone id): its eight 16-bit groups, or null. */
function parseIPv6(input: string): number[] | null {
  let s = input;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (!s.includes(':')) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (i === pieces.length - 1 && p.includes('.')) {
        const v4 = parseIPv4(p);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (HEXTET.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  // An embedded IPv4 may only end the address.
  if (halves.length === 2 && halves[0].includes('.')) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}
