import crypto from 'node:crypto';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previousDay } from '../../domain/event-digest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { insertAlias, upsertAttributes } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { digestRoot, headsOfDay } from '../../examples/receiver/digest';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { verifyChain } from '../helpers/event-chain-verify';
import { makeEntitlement } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { dumpForms, tenantRowsAsText } from '../helpers/tenant-dump';
import { until } from '../helpers/until';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * `POST /v1/customers/{app_user_id}/erase` (docs/support.md, "Erasure"): the customer's attributes,
 * notes, aliases and buyer emails go, the app user id too (the billing records stay under a
 * pseudonym, the same in every table), personal values in their events become SHA-256 hashes; the
 * chains still verify and the re-fetch, an export and the signed digest still agree; the erased
 * values are in none of the tenant's rows afterwards, and the id comes back as a new customer.
 */
describe('erasing a customer', () => {
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  const user = `erase_${crypto.randomUUID()}`;
  const anonymous = `$RCAnonymousID:${crypto.randomUUID().replaceAll('-', '')}`;
  // A web purchase made without an app user is held under the buyer's email: its events carry it.
  const buyer = `buyer.${crypto.randomUUID().slice(0, 8)}@example.com`;
  const email = `ada.${crypto.randomUUID().slice(0, 8)}@example.com`;
  const displayName = `Ada Lovelace ${crypto.randomUUID().slice(0, 8)}`;
  const noteText = `Called from +44 20 7946 ${crypto.randomUUID().slice(0, 4)}`;
  const secrets = [email, displayName, noteText, buyer];
  const day = previousDay(Date.now());
  const day_ = (iso: string) => iso.slice(0, 10);

  const erase = (key: string, who = user) =>
    call(api.apiUrl, `/customers/${encodeURIComponent(who)}/erase`, key, { method: 'POST' });
  const eventsOf = async (who: string) =>
    (await call(api.apiUrl, `/customers/${encodeURIComponent(who)}/events?limit=200`, t.secret_key)).body.data;
  const chainRows = () =>
    testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .whereNotNull('sequence')
      .orderBy(['order_key', 'sequence']);
  const setState = (id: string, state: string) =>
    withTenant(testDb(), t.tenant_id, (trx) => trx('entitlements').where({ id }).update({ state }));
  const exportFiles = async (format: 'parquet' | 'csv') => {
    const started = await call(api.apiUrl, '/exports', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ format }),
    });
    expect(started.status).toBe(202);
    const done = await until(
      'export finished',
      async () => (await call(api.apiUrl, `/exports/${started.body.id}`, t.secret_key)).body,
      (b) => b.status !== 'running',
      90_000,
    );
    expect(done.status).toBe('succeeded');
    const files: Record<string, Uint8Array> = {};
    for (const f of done.files) {
      const res = await fetch(`${api.apiUrl}/exports/${done.id}/files/${f.name}`, {
        headers: { authorization: `Bearer ${t.secret_key}` },
      });
      files[f.table] = new Uint8Array(await res.arrayBuffer());
    }
    return files;
  };

  beforeAll(async () => {
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('erasure');
    const e = await makeEntitlement(t.tenant_id, { appUserId: user });
    for (const state of ['grace_period', 'active']) await setState(e.id, state);
    const b = await makeEntitlement(t.tenant_id, { appUserId: buyer, provider: 'psp_a' });
    await setState(b.id, 'grace_period');
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      // The app's attributes and the anonymous id it identified, through the RevenueCat path's own writes.
      await upsertAttributes(
        trx,
        t.tenant_id,
        user,
        [
          { name: '$email', value: email, setAtMs: Date.now() },
          { name: '$displayName', value: displayName, setAtMs: Date.now() },
        ],
        100,
      );
      await upsertAttributes(trx, t.tenant_id, anonymous, [{ name: '$email', value: email, setAtMs: 1 }], 100);
      await insertAlias(trx, t.tenant_id, anonymous, user, 100);
      // The buyer's email a web provider sent with the purchase (written by the lifecycle from the delivery).
      await trx('subscriptions').where({ id: e.subscription_id }).update({ email });
      await trx('subscriptions').where({ id: b.subscription_id }).update({ email: buyer });
      // A provider's delivery, stored redacted of emails and names, that names the app user in a field of its own.
      await trx('webhook_deliveries').insert({
        tenant_id: t.tenant_id,
        provider: 'psp_a',
        event_id: `evt_${crypto.randomUUID()}`,
        event_type: 'checkout.completed',
        payload: { data: { client_reference_id: user, amount: 999 } },
        subscription_id: e.subscription_id,
      });
    });
    const note = await call(api.apiUrl, `/customers/${user}/notes`, t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ body: noteText }),
    });
    expect(note.status).toBe(201);
    // Recorded yesterday (UTC), so the day's digest covers them.
    await testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .update({ created_at: testDb().raw(`(?::date + time '12:00') at time zone 'UTC'`, [day]) });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('removes the personal data and the id, keeps the billing records under a pseudonym, and the chains, re-fetch, export and digest still agree', async () => {
    const before = await chainRows();
    const userEvents = await eventsOf(user);
    const buyerEvents = await eventsOf(buyer);
    // The sign-in of the anonymous id is the chain's last event (customer.merged), naming it.
    expect(userEvents.map((x: any) => x.data.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(userEvents[4]).toMatchObject({ type: 'customer.merged', data: { merged_app_user_id: anonymous } });
    expect(userEvents.every((x: any) => x.data.proof === 2)).toBe(true);
    expect(buyerEvents[0].data.app_user_id).toBe(buyer);
    verifyChain(userEvents);
    verifyChain(buyerEvents);
    const sdk = (who: string) => call(api.apiRoot, `/v1/sdk/subscribers/${encodeURIComponent(who)}`, t.publishable_key);
    expect((await sdk(user)).body.is_premium).toBe(true);
    // An export made before the erasure holds the id: its files go with it.
    const earlier = await exportFiles('csv');
    expect(Buffer.from(earlier.customers).toString('utf8')).toContain(user);

    const r = await erase(t.secret_key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'customer_erasure',
      app_user_id: user,
      erased: true,
      removed: { attributes: 3, aliases: 1, notes: 1, emails: 1, event_bodies: userEvents.length },
    });
    const pseudonym: string = r.body.erased_as;
    expect(pseudonym).toMatch(/^erased_[0-9a-f]{32}$/);
    const rb = await erase(t.secret_key, buyer);
    expect(rb.body.removed).toMatchObject({ emails: 1, event_bodies: buyerEvents.length });
    expect(rb.body.erased_as).not.toBe(pseudonym);

    // Asking again answers the same erasure.
    const again = await erase(t.secret_key);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      erased: false,
      erased_as: pseudonym,
      erased_at: r.body.erased_at,
      removed: r.body.removed,
    });

    // Billing records stay, under the pseudonym; the id and the personal values are gone.
    expect((await call(api.apiUrl, `/customers/${user}`, t.secret_key)).status).toBe(404);
    const page = await call(api.apiUrl, `/customers/${pseudonym}`, t.secret_key);
    expect(page.status).toBe(200);
    expect(page.body.entitlements).toHaveLength(1);
    expect(page.body.attributes).toEqual([]);
    expect((await call(api.apiUrl, `/customers/${pseudonym}/notes`, t.secret_key)).body.data).toEqual([]);
    const left = await withTenant(testDb(), t.tenant_id, async (trx) => ({
      attrs: await trx('subscriber_attributes').whereIn('app_user_id', [user, anonymous, pseudonym]),
      aliases: await trx('app_user_aliases').whereIn('app_user_id', [user, pseudonym]),
      subs: await trx('subscriptions').whereIn('app_user_id', [pseudonym, rb.body.erased_as]).select('email', 'status'),
    }));
    expect(left.attrs).toEqual([]);
    expect(left.aliases).toEqual([]);
    expect(left.subs.map((s) => s.email)).toEqual([null, null]);

    // Every chain: the same hashes as before, each link checked independently.
    const after = await chainRows();
    expect(after.map((x) => x.body.data.hash).sort()).toEqual(before.map((x) => x.body.data.hash).sort());
    const chains = new Map<string, any[]>();
    for (const x of after) chains.set(x.order_key, [...(chains.get(x.order_key) ?? []), x]);
    for (const events of chains.values()) verifyChain(events.map((x) => x.body));
    const buyerAfter = await eventsOf(rb.body.erased_as);
    expect(buyerAfter[0].data.app_user_id).toBeUndefined();
    expect(buyerAfter[0].data.app_user_id_sha256).toBe(sha256(buyer));
    // Re-fetch answers what is stored: the same events, each id as its SHA-256, under the pseudonym.
    const userAfter = await eventsOf(pseudonym);
    expect(userAfter.map((x: any) => x.data.hash)).toEqual(userEvents.map((x: any) => x.data.hash));
    expect(userAfter.every((x: any) => x.data.app_user_id_sha256 === sha256(user) && !('app_user_id' in x.data))).toBe(
      true,
    );
    expect(userAfter.map((x: any) => x.data.known_as_sha256)).toEqual(
      userEvents.map((x: any) => x.data.known_as.map(sha256)),
    );

    // The digest of the day (made now, after the erasure) and an export's events file agree.
    const digest = (await call(api.apiUrl, `/digests/${day}`, t.secret_key)).body;
    const heads = [...chains.values()].map((events) => events.at(-1)!.body.data.hash);
    expect(digest).toMatchObject({ events: after.length, root: digestRoot(heads) });
    const files = await exportFiles('parquet');
    const rows = (await parquetReadObjects({ file: files.events.buffer as ArrayBuffer })) as any[];
    const fromFile = headsOfDay(rows, day);
    expect([fromFile.events, digestRoot(fromFile.heads)]).toEqual([digest.events, digest.root]);
    expect(rows.every((x) => day_(new Date(x.created_at).toISOString()) === day)).toBe(true);

    // A later event about the erased customer's records goes on the pseudonym's chain, where it ended.
    const [own] = await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: pseudonym });
    await setState(own.id, 'expired');
    const continued = await eventsOf(pseudonym);
    expect(continued.map((x: any) => x.data.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(continued[5].data).toMatchObject({ app_user_id: pseudonym, prev_hash: userEvents[4].data.hash });
    verifyChain(continued);

    // Nowhere: API answers, every export file written since (CSV, readable as text), every row the
    // database holds for the tenant (binary columns as hex: the earlier export's files are gone).
    const csv = await exportFiles('csv');
    const seen = [
      JSON.stringify((await call(api.apiUrl, `/customers/${pseudonym}`, t.secret_key)).body),
      JSON.stringify(continued),
      JSON.stringify(await eventsOf(rb.body.erased_as)),
      JSON.stringify((await call(api.apiUrl, '/audit?limit=200', t.secret_key)).body),
      ...Object.values(csv).map((b) => Buffer.from(b).toString('utf8')),
      await tenantRowsAsText(t.tenant_id),
    ].join('\n');
    const found = [...secrets, user, anonymous].flatMap((value) =>
      dumpForms(value).flatMap((form) => seen.split('\n').filter((line) => line.includes(form))),
    );
    expect(found).toEqual([]);
    expect(seen).toContain(pseudonym);
    // The erasures file names the pseudonym and how to find the rows held from earlier exports.
    expect(Buffer.from(csv.erasures).toString('utf8')).toContain(`${pseudonym},${sha256(user)},`);

    // The premium check does not know the id any more (asking keys a rate limit by it: after the dump).
    expect((await sdk(user)).body.is_premium).toBe(false);
    // The id comes back as a new, unrelated customer: its own records, a chain from the start.
    await makeEntitlement(t.tenant_id, { appUserId: user });
    expect((await sdk(user)).body.is_premium).toBe(true);
    const renewed = await call(api.apiUrl, `/customers/${user}`, t.secret_key);
    expect(renewed.body.entitlements).toHaveLength(1);
    expect(renewed.body.entitlements[0].id).not.toBe(own.id);
    const fresh = await eventsOf(user);
    expect(fresh[0].data).toMatchObject({ sequence: 1, prev_hash: '0'.repeat(64), app_user_id: user });
    expect((await call(api.apiUrl, `/customers/${pseudonym}`, t.secret_key)).body.entitlements).toHaveLength(1);
    // Erasing it again is a new erasure, under a new pseudonym.
    const second = await erase(t.secret_key);
    expect(second.body).toMatchObject({ erased: true });
    expect(second.body.erased_as).not.toBe(pseudonym);
    expect((await erase(t.secret_key)).body.erased_as).toBe(second.body.erased_as);
  });

  it('is audited without values; unknown or another tenant’s customer is 404; only customers:erase may', async () => {
    const [row] = await testDb()('audit_entries').where({ tenant_id: t.tenant_id, action: 'customers.erase' }).limit(1);
    expect(row).toMatchObject({ outcome: 'ok' });

    const unknown = await erase(t.secret_key, `nobody_${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'not_found' });

    const other = await newTenant('erasure-other');
    const theirs = await erase(other.secret_key);
    expect(theirs.status).toBe(404);
    // Nor does another tenant know the pseudonym.
    const [mine] = await testDb()('customer_erasures').where({ tenant_id: t.tenant_id }).limit(1);
    expect((await erase(other.secret_key, mine.erased_as)).status).toBe(404);
    expect((await call(api.apiUrl, `/customers/${mine.erased_as}`, other.secret_key)).status).toBe(404);

    const support = (await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'customers:erase') as Scope[])).secret_key;
    expect((await erase(support)).status).toBe(403);
    const eraser = (await keyWith(t.tenant_id, ['customers:erase'])).secret_key;
    expect((await erase(eraser)).status).toBe(200);
  });
});
