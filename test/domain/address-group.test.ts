import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../domain/address-group';

describe('addressGroup: what a per-address limit counts an address as', () => {
  it('IPv4 is itself; an IPv4-mapped IPv6 address is its IPv4 address, in either spelling', () => {
    expect(addressGroup('192.0.2.7')).toBe('192.0.2.7');
    expect(addressGroup('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressGroup('::FFFF:c000:0207')).toBe('192.0.2.7');
    expect(addressGroup('0:0:0:0:0:ffff:7f00:1')).toBe('127.0.0.1');
  });

  it('other IPv6 addresses group by /64, whatever their spelling', () => {
    const g = '2001:db8:1:2::/64';
    for (const a of ['2001:db8:1:2::1', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:DB8:1:2:a:b:c:d', '2001:db8:1:2::1.2.3.4', '2001:db8:1:2::1%eth0']) {
      expect(addressGroup(a), a).toBe(g);
    }
    expect(addressGroup('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    // IPv4-compatible (deprecated) and NAT64 forms are ordinary IPv6 here: their /64.
    expect(addressGroup('64:ff9b::192.0.2.7')).toBe('64:ff9b:0:0::/64');
  });

  it('text that is not an address is its own group, unchanged', () => {
    for (const s of ['', 'unknown', '1.2.3', '256.1.1.1', '1:2:3', '1::2::3', '1:2:3:4:5:6:7:8:9', '::1.2.3', 'g::1', '12345::1', '1.2.3.4::']) {
      expect(addressGroup(s), s).toBe(s);
    }
  });

  it('every IPv6 address falls inside its group, and addresses sharing 64 bits share it (checked against node:net)', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.ipV6(), (a, b) => {
        const ga = addressGroup(a);
        if (ga.endsWith('/64')) {
          const list = new net.BlockList();
          list.addSubnet(ga.slice(0, -'/64'.length), 64, 'ipv6');
          expect(list.check(a, 'ipv6'), `${a} in ${ga}`).toBe(true);
          expect(addressGroup(b) === ga, `${a} ${b}`).toBe(list.check(b, 'ipv6'));
        } else {
          // Only IPv4-mapped addresses leave IPv6: the group is the embedded IPv4.
          expect(net.isIPv4(ga), `${a} → ${ga}`).toBe(true);
          expect(expandsTo(a, ga), `${a} → ${ga}`).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

/** Whether IPv6 text `a` is the IPv4-mapped form of `v4`. */
function expandsTo(a: string, v4: string): boolean {
  const list = new net.BlockList();
  list.addAddress(`::ffff:${v4}`, 'ipv6');
  return list.check(a, 'ipv6');
}
