import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';
import { proofHash, verifyChain } from '../helpers/event-chain-verify';
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

  it('one customer, one chain: a merge is an event on the customer’s chain that ends the merged id’s, and later events about rows stored under the merged id follow it, naming the customer, with known_as', async () => {
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

    // The anonymous user signs in: one customer from now on, announced on the customer's chain.
    await withTenant(testDb(), t.tenant_id, (trx) => insertAlias(trx, t.tenant_id, anon, user, 10));
    // The same sign-in again makes nothing and announces nothing.
    expect(await withTenant(testDb(), t.tenant_id, (trx) => insertAlias(trx, t.tenant_id, anon, user, 10))).toBe(false);
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: anonEnt.id }).update({ state: 'grace_period' }),
    );
    const chain = await chainOf(user);
    expect(chain.map((e) => e.type)).toEqual([
      'subscription.status_changed',
      'entitlement.active',
      'customer.merged',
      'entitlement.grace_period',
    ]);
    // The merge names both ids and commits to the head of the chain it ends: the two chains link.
    expect(chain[2].data).toMatchObject({
      app_user_id: user,
      merged_app_user_id: anon,
      merged_sequence: 2,
      merged_hash: before[1].data.hash,
      known_as: [anon],
      sequence: 3,
    });
    const merged = chain[3].data;
    // Named by the customer's id, the stored id among known_as, numbered and linked on the customer's chain.
    expect(merged).toMatchObject({ app_user_id: user, known_as: [anon], state: 'grace_period', sequence: 4 });
    expect(merged.prev_hash).toBe(chain[2].data.hash);
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
    expect(
      Object.fromEntries(
        heads.map((h) => [
          h.subject,
          [Number(h.seq), h.last_hash, h.merged_into, h.merged_sequence && Number(h.merged_sequence)],
        ]),
      ),
    ).toEqual({
      [anon]: [2, before[1].data.hash, user, 3],
      [user]: [4, merged.hash, null, null],
    });

    // A backend merge of another identified user: announced, its rows' events follow to the same chain, known_as grows.
    await makeEntitlement(t.tenant_id, { appUserId: other, provider: 'psp_b' });
    const otherBefore = await chainOf(other);
    await withTenant(testDb(), t.tenant_id, (trx) => mergeAppUsers(trx, t.tenant_id, other, user));
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ tenant_id: t.tenant_id, app_user_id: other }).update({ state: 'expired' }),
    );
    const after = await chainOf(user);
    expect(after.slice(-2).map((e) => e.data)).toMatchObject([
      {
        app_user_id: user,
        merged_app_user_id: other,
        merged_sequence: 2,
        merged_hash: otherBefore[1].data.hash,
        known_as: [anon, other],
        sequence: 5,
      },
      { app_user_id: user, known_as: [anon, other], sequence: 6, state: 'expired' },
    ]);
    verifyChain(after);
    expect(await chainOf(other)).toEqual(otherBefore);
  });

  it('an event resolved before a merge committed waits on the merged id’s chain, then follows to the customer’s: nothing lands after the merge on the chain it ended', async () => {
    const t = await makeTenant('chain-race');
    const anon = `$RCAnonymousID:${crypto.randomBytes(16).toString('hex')}`;
    const user = `user_${crypto.randomUUID()}`;
    const ent = await makeEntitlement(t.tenant_id, { appUserId: anon });
    const chainOf = async (id: string) =>
      (
        await testDb()('outbound_events')
          .where({ tenant_id: t.tenant_id, order_key: outboundSubjectKey(t.tenant_id, id) })
          .orderBy('sequence')
      ).map((r) => r.body);
    const before = await chainOf(anon);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let mergeHeld!: () => void;
    const held = new Promise<void>((r) => (mergeHeld = r));
    // The sign-in, its transaction held open after it closed the anonymous id's chain.
    const signIn = withTenant(testDb(), t.tenant_id, async (trx) => {
      await insertAlias(trx, t.tenant_id, anon, user, 10);
      mergeHeld();
      await gate;
    });
    await held;
    // Meanwhile the anonymous id's purchase changes: its trigger reads no alias yet, so it asks for that id's chain.
    let pid = 0;
    const change = withTenant(testDb(), t.tenant_id, async (trx) => {
      pid = (await trx.raw('select pg_backend_pid() as pid')).rows[0].pid;
      await trx('entitlements').where({ id: ent.id }).update({ state: 'grace_period' });
    });
    await until(
      'the change waits on the merged id’s chain',
      async () =>
        (await testDb().raw('select wait_event_type from pg_stat_activity where pid = ?', [pid])).rows[0]
          ?.wait_event_type,
      (w) => w === 'Lock',
      10_000,
    );
    release();
    await signIn;
    await change;
    expect(await chainOf(anon)).toEqual(before);
    const chain = await chainOf(user);
    expect(chain.map((e) => [e.type, e.data.app_user_id, e.data.sequence])).toEqual([
      ['customer.merged', user, 1],
      ['entitlement.grace_period', user, 2],
    ]);
    expect(chain[0].data).toMatchObject({ merged_sequence: 2, merged_hash: before[1].data.hash });
    verifyChain(chain);
  });
});
