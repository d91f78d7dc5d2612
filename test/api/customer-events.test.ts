import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { withTenant } from '../../db/tenant-tx';
import { EventChains, eventHash, type CustomerEvent } from '../../examples/receiver/event-chain';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';

/**
 * `GET /v1/customers/{app_user_id}/events?after=N` (docs/event-proofs.md): the events exactly as
 * recorded, in sequence order; the documented receiver (examples/receiver/event-chain.ts) that
 * dropped deliveries detects the gap and fills it from here, checking every link.
 */
describe('GET /v1/customers/{app_user_id}/events', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let reader: string;
  const user = `events_${crypto.randomUUID()}`;
  let entitlementId: string;

  const events = (key: string, query = '', who = user) =>
    call(api.apiUrl, `/customers/${encodeURIComponent(who)}/events${query}`, key);
  const recorded = async () =>
    (await testDb()('outbound_events').where({ tenant_id: t.tenant_id }).whereNotNull('sequence').orderBy('sequence'))
      .filter((r) => r.body.data.app_user_id === user)
      .map((r) => r.body as CustomerEvent);
  const setState = (state: string) =>
    withTenant(testDb(), t.tenant_id, (trx) => trx('entitlements').where({ id: entitlementId }).update({ state }));

  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('customer-events');
    reader = (await keyWith(t.tenant_id, ['customers:read'])).secret_key;
    entitlementId = (await makeEntitlement(t.tenant_id, { appUserId: user })).id;
    for (const state of ['grace_period', 'active', 'expired']) await setState(state);
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers every event after N in sequence order, each exactly as recorded, with paging', async () => {
    const all = await recorded();
    expect(all.map((e) => e.data.sequence)).toEqual([1, 2, 3, 4, 5]);
    const r = await events(reader);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual(all);
    expect(r.body.pagination).toEqual({ limit: 50, offset: 0, total: 5, has_more: false });
    for (const e of r.body.data) expect(eventHash(e.data)).toBe(e.data.hash);

    const after2 = await events(reader, '?after=2&limit=2');
    expect(after2.body.data.map((e: CustomerEvent) => e.data.sequence)).toEqual([3, 4]);
    expect(after2.body.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    expect((await events(reader, '?after=5')).body).toEqual({
      data: [],
      pagination: { limit: 50, offset: 0, total: 0, has_more: false },
      merged_into: null,
    });
  });

  it('a receiver that dropped deliveries detects the gap and recovers exactly what it missed', async () => {
    const all = await recorded();
    const chains = new EventChains({ apiUrl: api.apiUrl, secretKey: reader });
    const applied: CustomerEvent[] = [];
    // Delivered: 1, then 4 (2 and 3 lost), then 3 late, then 5 twice.
    for (const i of [0, 3, 2, 4, 4]) applied.push(...(await chains.receive(all[i])));
    expect(applied.map((e) => e.data.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(applied).toEqual(all);
    expect(chains.refetched).toBe(3);
    expect(chains.heads.get(user)).toEqual({ sequence: 5, hash: all[4].data.hash });

    // A forged delivery (a changed state with the old hash) does not pass: the receiver fetches the real one.
    const fresh = new EventChains({ apiUrl: api.apiUrl, secretKey: reader });
    const forged = { ...all[0], data: { ...all[0].data, state: 'revoked' } };
    expect(await fresh.receive(forged)).toEqual([all[0]]);
    expect(await fresh.receive(all[1])).toEqual([all[1]]);
  });

  it('bad input is a 400 naming after; an unknown customer and another tenant’s are 404', async () => {
    for (const q of ['?after=-1', '?after=abc', '?after=1.5']) {
      const r = await events(reader, q);
      expect([q, r.status, r.body.error?.param ?? r.body.param]).toEqual([q, 400, 'after']);
    }
    expect((await events(reader, '', 'nobody_here')).status).toBe(404);
    const other = await newTenant('customer-events-other');
    const theirs = (await keyWith(other.tenant_id, ['customers:read'])).secret_key;
    const cross = await events(theirs);
    expect(cross.status).toBe(404);
    expect(JSON.stringify(cross.body)).not.toContain(user.slice(7));
    expect((await events(theirs, '?after=3')).status).toBe(404);
  });

  it('needs customers:read: every other scope is refused', async () => {
    const others = (await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'customers:read') as Scope[])).secret_key;
    const r = await events(others);
    expect(r.status).toBe(403);
  });
});
