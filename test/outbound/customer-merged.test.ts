import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Purchases } from '@revenuecat/purchases-js';
import { insertRevenueCatKey } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { EventChains, type CustomerEvent } from '../../examples/receiver/event-chain';
import { call, keyWith, newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { verifyChain } from '../helpers/event-chain-verify';
import { makeEntitlement } from '../helpers/factories';
import { stockPurchases } from '../helpers/revenuecat';
import { until } from '../helpers/until';
import { createEndpoint, startOutboundStack } from './fixtures';
import { startReceiver } from './receiver';

/**
 * A merge is announced (docs/transfers.md, "Aliases are not transfers"): `customer.merged` for
 * RevenueCat's identify (the stock web SDK), our SDK's identify and the tenant's backend merge,
 * once each, to the endpoints that want it, on the surviving customer's chain, linked to the head
 * of the merged id's; a receiver that knows only the merged id follows it to the customer
 * (docs/event-proofs.md, "Following a merged id"), through the API and the assistants' tool. Real
 * Postgres, Temporal, workers, the API and a receiving server.
 */
describe('customer.merged: a merge announced, and a merged id followed', () => {
  let s: Awaited<ReturnType<typeof startOutboundStack>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let reader: string;
  let webKey: string;
  let merges: { secret: string };
  let others: Awaited<ReturnType<typeof startReceiver>>;

  const anonId = () => `$RCAnonymousID:${crypto.randomBytes(16).toString('hex')}`;
  const events = (id: string, query = '', key = reader) =>
    call(s.api.apiUrl, `/customers/${encodeURIComponent(id)}/events${query}`, key);
  /** The tenant's recorded merge events (recorded in the request's own transaction). */
  const mergeEvents = async () =>
    (
      await testDb()('outbound_events').where({ tenant_id: t.tenant_id, type: 'customer.merged' }).orderBy('created_at')
    ).map((r) => r.body as CustomerEvent);
  /** Every event of one chain, as the API answers it. */
  const chain = async (id: string) => (await events(id, '?limit=200')).body.data as CustomerEvent[];
  const delivered = () =>
    s.rx.received
      .map((r) => s.rx.verify(r, merges.secret) as CustomerEvent)
      .filter((e) => e.type === 'customer.merged');

  beforeAll(async () => {
    s = await startOutboundStack();
    t = await newTenant('merged');
    reader = (await keyWith(t.tenant_id, ['customers:read'])).secret_key;
    webKey = (
      await withTenant(testDb(), t.tenant_id, (trx) =>
        insertRevenueCatKey(trx, { tenantId: t.tenant_id, platform: 'web', mode: 'test' }),
      )
    ).public_key;
    // One endpoint takes merges only, another everything but merges: the type is one of the list.
    merges = await createEndpoint(s.api.apiUrl, t.secret_key, { url: s.rx.url, event_types: ['customer.merged'] });
    others = await startReceiver();
    await createEndpoint(s.api.apiUrl, t.secret_key, {
      url: others.url,
      event_types: ['entitlement.active', 'subscription.status_changed'],
    });
  });
  afterAll(async () => {
    await others?.close();
    await s?.close();
  });

  it('RevenueCat’s identify from an anonymous id (the stock web SDK) sends customer.merged once, as documented, signed, on the customer’s chain linked to the anonymous id’s head', async () => {
    const anon = Purchases.generateRevenueCatAnonymousAppUserId();
    const person = `person_${crypto.randomUUID()}`;
    await makeEntitlement(t.tenant_id, { appUserId: anon });
    await makeEntitlement(t.tenant_id, { appUserId: person, provider: 'psp_a' });
    const anonChain = await chain(anon);
    const personBefore = await chain(person);
    expect(anonChain.map((e) => e.data.sequence)).toEqual([1, 2]);

    const purchases = stockPurchases(`${s.api.apiRoot}/revenuecat`, webKey, anon);
    await purchases.identifyUser(person);
    expect(purchases.getAppUserId()).toBe(person);
    // The same sign-in again, and a sign-in between two identified ids: nothing merges, nothing is sent.
    for (const body of [
      { app_user_id: anon, new_app_user_id: person },
      { app_user_id: person, new_app_user_id: `someone_${crypto.randomUUID()}` },
    ]) {
      const r = await call(`${s.api.apiRoot}/revenuecat`, '/v1/subscribers/identify', webKey, {
        method: 'POST',
        body: JSON.stringify(body),
      });
      expect([200, 201]).toContain(r.status);
    }
    const recorded = (await mergeEvents()).filter((e) => e.data.merged_app_user_id === anon);
    expect(recorded).toHaveLength(1);

    await until(
      'the merge delivered',
      async () => delivered().filter((e) => e.data.merged_app_user_id === anon),
      (d) => d.length === 1,
      30_000,
    );
    const [body] = delivered().filter((e) => e.data.merged_app_user_id === anon);
    // Delivered exactly as recorded; the content a tenant's backend keys its users by.
    expect(body).toEqual(recorded[0]);
    expect(body).toMatchObject({ type: 'customer.merged', version: 1 });
    expect(body.data).toEqual({
      app_user_id: person,
      merged_app_user_id: anon,
      known_as: [anon],
      merged_sequence: 2,
      merged_hash: anonChain[1].data.hash,
      sequence: 3,
      prev_hash: personBefore[1].data.hash,
      // Its ids are hashed in its proof form (docs/event-proofs.md, "Erasure").
      proof: 2,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      // The customer's whole snapshot: the purchases under both ids.
      entitlements: [
        expect.objectContaining({ provider: 'store_android', state: 'active' }),
        expect.objectContaining({ provider: 'psp_a', state: 'active' }),
      ],
    });
    // Both chains verify independently, and link across the merge.
    verifyChain(anonChain);
    verifyChain(await chain(person));
    expect((await chain(person)).at(-1)).toEqual(body);
    // The endpoint that did not ask for merges got none.
    expect(others.received.map((r) => JSON.parse(r.body).type)).not.toContain('customer.merged');
  });

  it('our SDK’s identify and the tenant’s backend merge send it once each; a repeat sends nothing', async () => {
    const anon = anonId();
    const person = `sdk_${crypto.randomUUID()}`;
    const identify = () =>
      call(s.api.apiRoot, `/v1/sdk/subscribers/${encodeURIComponent(anon)}/identify`, t.publishable_key, {
        method: 'POST',
        body: JSON.stringify({ new_app_user_id: person }),
      });
    expect((await identify()).status).toBe(200);
    expect((await identify()).status).toBe(200);

    const a = `merge_a_${crypto.randomUUID()}`;
    const b = `merge_b_${crypto.randomUUID()}`;
    await makeEntitlement(t.tenant_id, { appUserId: a });
    const merge = () =>
      call(s.api.apiUrl, `/customers/${b}/merge`, t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ from_app_user_id: a }),
      });
    expect((await merge()).body.merged).toBe(true);
    expect((await merge()).body.merged).toBe(false);
    // A merge refused (into itself) records nothing either.
    const self = await call(s.api.apiUrl, `/customers/${b}/merge`, t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ from_app_user_id: b }),
    });
    expect(self.status).toBe(400);
    // And one refused as already merged elsewhere.
    const elsewhere = await call(s.api.apiUrl, `/customers/${person}/merge`, t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ from_app_user_id: a }),
    });
    expect(elsewhere.status).toBe(409);
    expect(
      (await mergeEvents()).filter((e) => e.data.merged_app_user_id === b || e.data.app_user_id === person),
    ).toHaveLength(1);

    const recorded = (await mergeEvents()).filter((e) => [anon, a].includes(e.data.merged_app_user_id as string));
    expect(
      recorded.map((e) => [e.data.app_user_id, e.data.merged_app_user_id, e.data.known_as, e.data.merged_sequence]),
    ).toEqual([
      // The anonymous id had no events of its own: its chain was empty.
      [person, anon, [anon], 0],
      [b, a, [a], 2],
    ]);
    expect(recorded[0].data.merged_hash).toBeNull();
    await until(
      'both delivered',
      async () => delivered().filter((e) => recorded.some((r) => r.id === e.id)).length,
      (n) => n === 2,
      30_000,
    );
    verifyChain(await chain(b));
  });

  it('a receiver that knows only the merged id follows it: the list names where its events continue, and nothing is lost or repeated', async () => {
    const anon = anonId();
    const person = `follow_${crypto.randomUUID()}`;
    const ent = await makeEntitlement(t.tenant_id, { appUserId: anon });
    const anonEvents = await chain(anon);
    const identified = await call(
      s.api.apiRoot,
      `/v1/sdk/subscribers/${encodeURIComponent(anon)}/identify`,
      t.publishable_key,
      { method: 'POST', body: JSON.stringify({ new_app_user_id: person }) },
    );
    expect(identified.status).toBe(200);
    // The anonymous purchase changes after the sign-in: an event on the customer's chain.
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: ent.id }).update({ state: 'grace_period' }),
    );
    const personEvents = await chain(person);
    expect(personEvents.map((e) => [e.type, e.data.sequence])).toEqual([
      ['customer.merged', 1],
      ['entitlement.grace_period', 2],
    ]);

    // The merged id's list: its own events, unchanged, and where they continue.
    const list = await events(anon);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual(anonEvents);
    expect(list.body.merged_into).toEqual({ app_user_id: person, sequence: 1 });
    expect((await events(anon, '?after=2')).body).toMatchObject({
      data: [],
      merged_into: { app_user_id: person, sequence: 1 },
    });
    // Following it as documented: the customer's events after merged_into.sequence - 1, the merge event first.
    const next = await events(person, `?after=${list.body.merged_into.sequence - 1}`);
    expect(next.body.data).toEqual(personEvents);
    expect(next.body.merged_into).toBeNull();
    expect(next.body.data[0].data).toMatchObject({ merged_sequence: 2, merged_hash: anonEvents[1].data.hash });
    verifyChain(anonEvents);
    verifyChain(personEvents);

    // The documented receiver, holding only the anonymous id's first event, then handed the customer's latest:
    // the anonymous id's missed event, the merge, the latest, in order, each link checked.
    const rx = new EventChains({ apiUrl: s.api.apiUrl, secretKey: reader });
    expect(await rx.receive(anonEvents[0])).toEqual([anonEvents[0]]);
    expect(await rx.receive(personEvents[1])).toEqual([anonEvents[1], ...personEvents]);
    expect(rx.mergedInto.get(anon)).toBe(person);
    // Later deliveries of any of them are duplicates.
    for (const e of [...anonEvents, ...personEvents]) expect(await rx.receive(e)).toEqual([]);
    // One handed the merge event itself (its endpoint takes merges) follows the same way.
    const rx2 = new EventChains({ apiUrl: s.api.apiUrl, secretKey: reader });
    for (const e of anonEvents) await rx2.receive(e);
    expect(await rx2.receive(personEvents[0])).toEqual([personEvents[0]]);
    expect(await rx2.receive(personEvents[1])).toEqual([personEvents[1]]);

    // The assistants' tool answers the same list, merged_into included.
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.api.toolsUrl}/`), {
        requestInit: { headers: { authorization: `Bearer ${reader}` } },
      }),
    );
    try {
      const r = await client.callTool({ name: 'billing_customer_events', arguments: { app_user_id: anon } });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual(list.body);
    } finally {
      await client.close();
    }
  });

  it('merged twice (an anonymous id signs in, then the tenant’s backend merges that user into another): a receiver that knows only the anonymous id follows hop by hop', async () => {
    const anon = anonId();
    const person = `hop_${crypto.randomUUID()}`;
    const household = `household_${crypto.randomUUID()}`;
    const ent = await makeEntitlement(t.tenant_id, { appUserId: anon });
    await makeEntitlement(t.tenant_id, { appUserId: household, provider: 'psp_a' });
    const anonEvents = await chain(anon);
    const signIn = await call(
      s.api.apiRoot,
      `/v1/sdk/subscribers/${encodeURIComponent(anon)}/identify`,
      t.publishable_key,
      { method: 'POST', body: JSON.stringify({ new_app_user_id: person }) },
    );
    expect(signIn.status).toBe(200);
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: ent.id }).update({ state: 'grace_period' }),
    );
    const merged = await call(s.api.apiUrl, `/customers/${household}/merge`, t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ from_app_user_id: person }),
    });
    expect(merged.body.merged).toBe(true);
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').where({ id: ent.id }).update({ state: 'expired' }),
    );
    const personEvents = await chain(person);
    const householdEvents = await chain(household);
    expect(personEvents.map((e) => e.type)).toEqual(['customer.merged', 'entitlement.grace_period']);
    // One event for the backend merge: the merged user with its own alias, all now the household's.
    expect(householdEvents.slice(-2).map((e) => [e.type, e.data.merged_app_user_id, e.data.known_as])).toEqual([
      ['customer.merged', person, [anon, person]],
      ['entitlement.expired', undefined, [anon, person]],
    ]);
    expect(householdEvents.at(-2)!.data).toMatchObject({ merged_sequence: 2, merged_hash: personEvents[1].data.hash });
    // Each id's list says where it went: the anonymous id to the person (its own hop), the person to the household.
    expect((await events(anon)).body.merged_into).toEqual({ app_user_id: person, sequence: 1 });
    expect((await events(person)).body.merged_into).toEqual({
      app_user_id: household,
      sequence: householdEvents.at(-2)!.data.sequence,
    });
    for (const c of [anonEvents, personEvents, householdEvents]) verifyChain(c);

    const rx = new EventChains({ apiUrl: s.api.apiUrl, secretKey: reader });
    for (const e of anonEvents) await rx.receive(e);
    expect(await rx.receive(householdEvents.at(-1)!)).toEqual([...personEvents, ...householdEvents.slice(-2)]);
    expect([rx.mergedInto.get(anon), rx.mergedInto.get(person)]).toEqual([person, household]);
  });

  it('two ids merged into each other at once: one merge, one 409, one event, never a cycle', async () => {
    const a = `pair_a_${crypto.randomUUID()}`;
    const b = `pair_b_${crypto.randomUUID()}`;
    await makeEntitlement(t.tenant_id, { appUserId: a });
    await makeEntitlement(t.tenant_id, { appUserId: b, provider: 'psp_a' });
    const merge = (into: string, from: string) =>
      call(s.api.apiUrl, `/customers/${into}/merge`, t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ from_app_user_id: from }),
      });
    const answers = await Promise.all([merge(a, b), merge(b, a)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(answers.find((r) => r.status === 409)!.body).toMatchObject({ error: 'customer_already_merged' });
    const aliases = await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('app_user_aliases').whereIn('alias_id', [a, b]).select('alias_id', 'app_user_id'),
    );
    expect(aliases).toHaveLength(1);
    const recorded = (await mergeEvents()).filter((e) => [a, b].includes(e.data.merged_app_user_id as string));
    expect(recorded.map((e) => [e.data.app_user_id, e.data.merged_app_user_id])).toEqual([
      [aliases[0].app_user_id, aliases[0].alias_id],
    ]);
  });

  it('an alias made before merges were events: the list names the customer, with no merge event to start from', async () => {
    const old = anonId();
    const person = `before_${crypto.randomUUID()}`;
    await makeEntitlement(t.tenant_id, { appUserId: old });
    // As migration 056's sign-ins wrote it: the alias row alone, nothing announced, the chain left open.
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('app_user_aliases').insert({ tenant_id: t.tenant_id, alias_id: old, app_user_id: person }),
    );
    expect((await events(old)).body.merged_into).toEqual({ app_user_id: person, sequence: null });
  });

  it('another tenant’s merged id is 404 (nothing of where it continues), and an id merged into nobody says null', async () => {
    const anon = anonId();
    const person = `cross_${crypto.randomUUID()}`;
    await call(s.api.apiRoot, `/v1/sdk/subscribers/${encodeURIComponent(anon)}/identify`, t.publishable_key, {
      method: 'POST',
      body: JSON.stringify({ new_app_user_id: person }),
    });
    expect((await events(anon)).body).toMatchObject({ data: [], merged_into: { app_user_id: person, sequence: 1 } });
    const other = await newTenant('merged-other');
    const theirs = (await keyWith(other.tenant_id, ['customers:read'])).secret_key;
    for (const id of [anon, person]) {
      const r = await events(id, '', theirs);
      expect(r.status).toBe(404);
      expect(JSON.stringify(r.body)).not.toContain(person);
    }
    expect((await events(person)).body.merged_into).toBeNull();
  });
});
