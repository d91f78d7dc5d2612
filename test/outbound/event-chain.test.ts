import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { proofHash } from '../helpers/event-chain-check';
import { makeEntitlement, makeTenant } from '../helpers/factories';
import { withTenant } from '../../db/tenant-tx';
import { outboundSubjectKey } from '../../db/customers';
import { insertAlias, mergeAppUsers } from '../../db/revenuecat';

/**
 * The per-customer hash chain (docs/event-proofs.md) checked with an independent implementation of
 * RFC 8785 (the `canonicalize` package) and Node's SHA-256: the database's canonical form is the
 * package's, and every event's `hash` and `prev_hash` link as documented, for a tenant with no
 * endpoint at all.
 */
const ZERO = '0'.repeat(64);

function verifyChain(events: Array<{ data: Record<string, unknown> }>): void {
  let prev = ZERO;
  let seq: number | undefined;
  for (const e of events) {
    const { hash, ...rest } = e.data;
    expect(rest.prev_hash).toBe(prev);
    if (seq !== undefined) expect(rest.sequence).toBe(seq + 1);
    // Over the proof form: the ids as their SHA-256 (docs/event-proofs.md, "Erasure").
    expect(rest.proof).toBe(2);
    expect(hash).toBe(proofHash(rest));
    prev = hash as string;
    seq = rest.sequence as number;
  }
}

describe('the database canonical JSON is RFC 8785', () => {
  const values: unknown[] = [
    { b: 1, a: [true, false, null], é: 'ü', A: { z: '', y: [] } },
    { s: 'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f line-sep \u2028 emoji 😀' },
    {
      n: [0, -0, 1, -1, 1.5, 0.1, 1e-7, 1.23e-6, 0.000001, 123456789012345680000, 1e21, 1.5e300, 2 ** 53, 2 ** 53 + 2],
    },
    { n: [3.14159, -2.5e-10, 100, 1234.5678, 9007199254740991, 0.30000000000000004, 5e-324] },
    { nested: { k10: 1, k2: 2, k1: { '': 0, ' ': 1 } }, '€': 1, '\u0001x': 'control key' },
    [],
    {},
    'plain',
  ];
  for (const [i, value] of values.entries())
    it(`value ${i}`, async () => {
      const { rows } = await testDb().raw('select jcs(?::jsonb) as c', [JSON.stringify(value)]);
      expect(rows[0].c).toBe(canonicalize(JSON.parse(JSON.stringify(value))));
    });

  it('random objects agree with the package', async () => {
    const rnd = (depth: number): unknown => {
      const r = Math.random();
      if (depth > 2 || r < 0.3) {
        const kinds = [
          () => Math.floor(Math.random() * 1e6) - 5e5,
          // Below 1e15: above it, Postgres may print a double with more digits than ECMAScript (docs/event-proofs.md).
          () => (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 35 - 20),
          () => String.fromCharCode(...Array.from({ length: 6 }, () => 1 + Math.floor(Math.random() * 0x2ffe))),
          () => Math.random() < 0.5,
          () => null,
        ];
        return kinds[Math.floor(Math.random() * kinds.length)]();
      }
      if (r < 0.6) return Array.from({ length: Math.floor(Math.random() * 4) }, () => rnd(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(Math.random() * 5) }, () => [
          Math.random()
            .toString(36)
            .slice(2, 2 + Math.floor(Math.random() * 6)),
          rnd(depth + 1),
        ]),
      );
    };
    const samples = Array.from({ length: 300 }, () => JSON.parse(JSON.stringify({ v: rnd(0) })));
    const { rows } = await testDb().raw(
      'select jcs(v) as c, ord from jsonb_array_elements(?::jsonb) with ordinality as a(v, ord) order by ord',
      [JSON.stringify(samples)],
    );
    const diff = rows
      .map((r: { c: string }, i: number) => [r.c, canonicalize(samples[i])])
      .filter(([a, b]: string[]) => a !== b);
    expect(diff).toEqual([]);
  });
});

describe('every customer event is chained', () => {
  it('a tenant without endpoints records and chains each change; the chain verifies independently', async () => {
    const t = await makeTenant('chain');
    const user = `user_${crypto.randomUUID()}`;
    const ent = await makeEntitlement(t.tenant_id, { appUserId: user });
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: ent.id }).update({ state: 'grace_period' }),
    );
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: ent.id }).update({ state: 'expired' }),
    );
    const rows = await testDb()('outbound_events').where({ tenant_id: t.tenant_id }).orderBy('sequence');
    const about = rows.filter((r) => r.body.data.app_user_id === user);
    // subscription.status_changed + entitlement.active, grace_period, expired.
    expect(about.map((r) => r.type)).toEqual([
      'subscription.status_changed',
      'entitlement.active',
      'entitlement.grace_period',
      'entitlement.expired',
    ]);
    expect(about.map((r) => Number(r.sequence))).toEqual([1, 2, 3, 4]);
    expect(about.map((r) => r.body.data.sequence)).toEqual([1, 2, 3, 4]);
    expect(await testDb()('outbound_deliveries').where({ tenant_id: t.tenant_id })).toEqual([]);
    verifyChain(about.map((r) => r.body));
    const head = await testDb()('customer_event_sequences').where({ tenant_id: t.tenant_id, subject: user }).first();
    expect(head.last_hash).toBe(about[3].body.data.hash);
  });

  it('changing any field of a recorded event breaks its hash', async () => {
    const t = await makeTenant('chain-tamper');
    const user = `user_${crypto.randomUUID()}`;
    await makeEntitlement(t.tenant_id, { appUserId: user });
    const rows = await testDb()('outbound_events').where({ tenant_id: t.tenant_id }).orderBy('sequence');
    const { hash, ...rest } = rows[1].body.data;
    expect(proofHash(rest)).toBe(hash);
    expect(proofHash({ ...rest, state: 'revoked' })).not.toBe(hash);
    // The ids are covered too, through their SHA-256.
    expect(proofHash({ ...rest, app_user_id: `${user}x` })).not.toBe(hash);
    expect(proofHash({ ...rest, known_as: ['someone'] })).not.toBe(hash);
  });

  it('one customer, one chain: after a merge, events about rows stored under the merged id go on the chain of the id it was merged into, naming it, with known_as', async () => {
    const t = await makeTenant('chain-alias');
    const anon = `$RCAnonymousID:${crypto.randomBytes(16).toString('hex')}`;
    const user = `user_${crypto.randomUUID()}`;
    const other = `user_${crypto.randomUUID()}`;
    const anonEnt = await makeEntitlement(t.tenant_id, { appUserId: anon });
    await makeEntitlement(t.tenant_id, { appUserId: user, provider: 'psp_a' });
    const chainOf = async (id: string) =>
      (
        await testDb()('outbound_events')
          .where({ tenant_id: t.tenant_id, order_key: outboundSubjectKey(t.tenant_id, id) })
          .orderBy('sequence')
      ).map((r) => r.body);
    const before = await chainOf(anon);
    expect(before.map((e) => [e.data.app_user_id, e.data.sequence, e.data.known_as])).toEqual([
      [anon, 1, []],
      [anon, 2, []],
    ]);

    // The anonymous user signs in: one customer from now on.
    await withTenant(testDb(), t.tenant_id, (trx) => insertAlias(trx, t.tenant_id, anon, user, 10));
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: anonEnt.id }).update({ state: 'grace_period' }),
    );
    const chain = await chainOf(user);
    const merged = chain[2].data;
    // Named by the customer's id, the stored id among known_as, numbered and linked on the customer's chain.
    expect(merged).toMatchObject({ app_user_id: user, known_as: [anon], state: 'grace_period', sequence: 3 });
    expect(merged.prev_hash).toBe(chain[1].data.hash);
    // The snapshot is the customer's: the purchase under either id.
    expect(merged.entitlements.map((e: { provider: string; state: string }) => [e.provider, e.state])).toEqual([
      ['store_android', 'grace_period'],
      ['psp_a', 'active'],
    ]);
    verifyChain(chain);
    // The merged id's chain keeps what was delivered on it before the merge, unchanged, and grows no more.
    expect(await chainOf(anon)).toEqual(before);
    const heads = await testDb()('customer_event_sequences')
      .where({ tenant_id: t.tenant_id })
      .whereIn('subject', [anon, user]);
    expect(Object.fromEntries(heads.map((h) => [h.subject, [Number(h.seq), h.last_hash]]))).toEqual({
      [anon]: [2, before[1].data.hash],
      [user]: [3, merged.hash],
    });

    // A backend merge of another identified user: its rows' events follow to the same chain, known_as grows.
    await makeEntitlement(t.tenant_id, { appUserId: other, provider: 'psp_b' });
    await withTenant(testDb(), t.tenant_id, (trx) => mergeAppUsers(trx, t.tenant_id, other, user));
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ tenant_id: t.tenant_id, app_user_id: other }).update({ state: 'expired' }),
    );
    const after = await chainOf(user);
    expect(after.at(-1)!.data).toMatchObject({
      app_user_id: user,
      known_as: [anon, other],
      sequence: 4,
      state: 'expired',
    });
    verifyChain(after);
    expect((await chainOf(other)).map((e) => e.data.sequence)).toEqual([1, 2]);
  });
});
