import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../domain/client-address-key';

/** Eight 16-bit groups → one text form, chosen by the flags (case, leading zeros, where `::` goes). */
function spell(
  h: number[],
  opts: { upper: boolean; pad: boolean; compressAt: number | null; zone: string | null },
): string {
  const g = h.map((x) => {
    const s = opts.pad ? x.toString(16).padStart(4, '0') : x.toString(16);
    return opts.upper ? s.toUpperCase() : s;
  });
  let text = g.join(':');
  if (opts.compressAt !== null) {
    // Compress the longest zero run starting at or after compressAt, if there is one.
    let start = -1;
    let len = 0;
    for (let i = opts.compressAt; i < 8 && start === -1; i++) {
      if (h[i] === 0) {
        start = i;
        while (start + len < 8 && h[start + len] === 0) len++;
      }
    }
    if (start !== -1) text = `${g.slice(0, start).join(':')}::${g.slice(start + len).join(':')}`;
  }
  return opts.zone ? `${text}%${opts.zone}` : text;
}

const hextet = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
const ipv6Groups = fc.array(hextet, { minLength: 8, maxLength: 8 });
const spelling = fc.record({
  upper: fc.boolean(),
  pad: fc.boolean(),
  compressAt: fc.option(fc.integer({ min: 0, max: 7 })),
  zone: fc.option(fc.constantFrom('eth0', '1', 'en0')),
});
const octets = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });
const isMapped = (h: number[]) => h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff;

describe('clientAddressKey: the one rule for address-keyed limits', () => {
  it('an IPv4 address is its own key', () => {
    fc.assert(
      fc.property(octets, (o) => {
        const a = o.join('.');
        expect(clientAddressKey(a)).toBe(a);
      }),
    );
  });

  it('IPv4-mapped IPv6, in any spelling, is the IPv4 inside', () => {
    fc.assert(
      fc.property(octets, fc.boolean(), fc.boolean(), (o, dotted, expanded) => {
        const v4 = o.join('.');
        const tail = dotted ? v4 : `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
        const text = `${expanded ? '0:0:0:0:0:' : '::'}ffff:${tail}`;
        expect(net.isIPv6(text)).toBe(true);
        expect(clientAddressKey(text)).toBe(v4);
      }),
    );
  });

  it('every other IPv6 address is keyed by its /64: same first 64 bits, same key; different, different', () => {
    fc.assert(
      fc.property(ipv6Groups, ipv6Groups, spelling, spelling, (a, b, sa, sb) => {
        fc.pre(!isMapped(a) && !isMapped(b));
        const ta = spell(a, sa);
        const tb = spell(b, sb);
        expect(net.isIPv6(ta.replace(/%.*$/, ''))).toBe(true);
        const samePrefix = a.slice(0, 4).every((x, i) => x === b[i]);
        expect(clientAddressKey(ta) === clientAddressKey(tb)).toBe(samePrefix);
        // Every address of a's /64 (any interface id) shares its key.
        const sibling = [...a.slice(0, 4), ...b.slice(4)];
        if (!isMapped(sibling)) expect(clientAddressKey(spell(sibling, sb))).toBe(clientAddressKey(ta));
      }),
      { numRuns: 500 },
    );
  });

  it('one address, many spellings, one key (brackets and surrounding space too)', () => {
    fc.assert(
      fc.property(ipv6Groups, spelling, spelling, (h, s1, s2) => {
        const k = clientAddressKey(spell(h, s1));
        expect(clientAddressKey(spell(h, s2))).toBe(k);
        expect(clientAddressKey(` [${spell(h, { ...s2, zone: null })}] `)).toBe(k);
      }),
    );
  });

  it('an IPv4 key never equals an IPv6 /64 key, and keys are short', () => {
    fc.assert(
      fc.property(octets, ipv6Groups, (o, h) => {
        fc.pre(!isMapped(h));
        const k6 = clientAddressKey(spell(h, { upper: false, pad: false, compressAt: 0, zone: null }));
        expect(k6).toMatch(/::\/64$/);
        expect(k6).not.toBe(clientAddressKey(o.join('.')));
        expect(k6.length).toBeLessThanOrEqual(24); // four groups of at most 4 hex digits, 3 colons, "::/64"
      }),
    );
  });

  it('examples', () => {
    expect(clientAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('2001:DB8:0:0:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64');
    expect(clientAddressKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    // Not an address: its own key, bounded.
    expect(clientAddressKey('unknown')).toBe('unknown');
    expect(clientAddressKey('x'.repeat(500))).toHaveLength(100);
    // Leading zeros in IPv4 (octal to some parsers) are not read as an address.
    expect(clientAddressKey('010.0.0.1')).toBe('010.0.0.1');
    expect(clientAddressKey('1::2::3')).toBe('1::2::3');
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        expect(typeof clientAddressKey(s)).toBe('string');
      }),
    );
  });
});
