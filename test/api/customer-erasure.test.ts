import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previousDay } from '../../domain/event-digest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { insertAlias, upsertAttributes } from '../../db/revenuecat';
import { withTenant } from '../../db/tenant-tx';
import { digestRoot, headsOfDay } from '../../examples/receiver/digest';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The chain checked independently of the service: RFC 8785 (`canonicalize`) and Node's SHA-256 over
 * the body as stored, where an erased field is already `<name>_sha256` and a field still holding an
 * email is hashed under that name first (docs/event-proofs.md, "Erasure").
 */
function verifyChain(events: Array<{ data: Record<string, unknown> }>): void {
  let prev = '0'.repeat(64);
  for (const e of events) {
    const { hash, ...rest } = e.data;
    const proof = Object.fromEntries(
      Object.entries(rest).map(([k, v]) =>
        typeof v === 'string' && /[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+/.test(v)
          ? [`${k}_sha256`, sha256(v)]
          : [k, v],
      ),
    );
    expect(rest.prev_hash).toBe(prev);
    expect(hash).toBe(sha256(canonicalize(proof)!));
    prev = hash as string;
  }
}

/**
 * `POST /v1/customers/{app_user_id}/erase` (docs/support.md, "Erasure"): the customer's attributes,
 * notes, aliases and buyer emails go, personal values in their events become SHA-256 hashes, billing
 * records stay; the chains still verify and the re-fetch, an export and the signed digest still
 * agree; the erased values are found nowhere afterwards.
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

  it('removes the personal data, keeps the billing records, and the chains, re-fetch, export and digest still agree', async () => {
    const before = await chainRows();
    const userEvents = await eventsOf(user);
    const buyerEvents = await eventsOf(buyer);
    // The sign-in of the anonymous id is the chain's last event (customer.merged), naming it.
    expect(userEvents.map((x: any) => x.data.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(userEvents[4]).toMatchObject({ type: 'customer.merged', data: { merged_app_user_id: anonymous } });
    expect(buyerEvents[0].data.app_user_id).toBe(buyer);
    verifyChain(buyerEvents);

    const r = await erase(t.secret_key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'customer_erasure',
      app_user_id: user,
      erased: true,
      removed: { attributes: 3, aliases: 1, notes: 1, emails: 1, event_bodies: 0 },
    });
    const rb = await erase(t.secret_key, buyer);
    expect(rb.body.removed).toMatchObject({ emails: 1, event_bodies: buyerEvents.length });

    // Asking again answers the same erasure.
    const again = await erase(t.secret_key);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ erased: false, erased_at: r.body.erased_at, removed: r.body.removed });

    // Billing records stay; the personal values are gone.
    const page = await call(api.apiUrl, `/customers/${user}`, t.secret_key);
    expect(page.status).toBe(200);
    expect(page.body.entitlements).toHaveLength(1);
    expect(page.body.attributes).toEqual([]);
    expect((await call(api.apiUrl, `/customers/${user}/notes`, t.secret_key)).body.data).toEqual([]);
    const left = await withTenant(testDb(), t.tenant_id, async (trx) => ({
      attrs: await trx('subscriber_attributes').whereIn('app_user_id', [user, anonymous]),
      aliases: await trx('app_user_aliases').where({ app_user_id: user }),
      subs: await trx('subscriptions').whereIn('app_user_id', [user, buyer]).select('email', 'status'),
    }));
    expect(left.attrs).toEqual([]);
    expect(left.aliases).toEqual([]);
    expect(left.subs.map((s) => s.email)).toEqual([null, null]);

    // Every chain: the same hashes as before, each link checked independently.
    const after = await chainRows();
    expect(after.map((x) => x.body.data.hash)).toEqual(before.map((x) => x.body.data.hash));
    const chains = new Map<string, any[]>();
    for (const x of after) chains.set(x.order_key, [...(chains.get(x.order_key) ?? []), x]);
    for (const events of chains.values()) verifyChain(events.map((x) => x.body));
    const buyerAfter = await eventsOf(buyer);
    expect(buyerAfter[0].data.app_user_id).toBeUndefined();
    expect(buyerAfter[0].data.app_user_id_sha256).toBe(sha256(buyer));
    // Re-fetch answers what is stored; the app user's own events did not change.
    expect(await eventsOf(user)).toEqual(userEvents);

    // The digest of the day (made now, after the erasure) and an export's events file agree.
    const digest = (await call(api.apiUrl, `/digests/${day}`, t.secret_key)).body;
    const heads = [...chains.values()].map((events) => events.at(-1)!.body.data.hash);
    expect(digest).toMatchObject({ events: after.length, root: digestRoot(heads) });
    const files = await exportFiles('parquet');
    const rows = (await parquetReadObjects({ file: files.events.buffer as ArrayBuffer })) as any[];
    const fromFile = headsOfDay(rows, day);
    expect([fromFile.events, digestRoot(fromFile.heads)]).toEqual([digest.events, digest.root]);
    expect(rows.every((x) => day_(new Date(x.created_at).toISOString()) === day)).toBe(true);

    // A later event about the app user: delivered bodies are written from the erased state.
    const [own] = await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: user });
    await setState(own.id, 'expired');

    // Nowhere: API answers, every export file (CSV, readable as text), audit rows, stored events.
    const csv = await exportFiles('csv');
    const seen = [
      JSON.stringify((await call(api.apiUrl, `/customers/${user}`, t.secret_key)).body),
      JSON.stringify(await eventsOf(user)),
      JSON.stringify(await eventsOf(buyer)),
      JSON.stringify((await call(api.apiUrl, `/customers/${user}/notes`, t.secret_key)).body),
      JSON.stringify((await call(api.apiUrl, '/audit?limit=200', t.secret_key)).body),
      JSON.stringify(await testDb()('audit_entries').where({ tenant_id: t.tenant_id })),
      JSON.stringify(await testDb()('outbound_events').where({ tenant_id: t.tenant_id })),
      JSON.stringify(await testDb()('customer_erasures').where({ tenant_id: t.tenant_id })),
      ...Object.values(csv).map((b) => Buffer.from(b).toString('utf8')),
    ].join('\n');
    for (const value of secrets.filter((v) => v !== buyer)) expect(seen).not.toContain(value);
    // The buyer's email stays only as the key of the billing records held under it (the app user id).
    expect(JSON.stringify(await testDb()('outbound_events').where({ tenant_id: t.tenant_id }))).not.toContain(buyer);
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

    const support = (await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'customers:erase') as Scope[])).secret_key;
    expect((await erase(support)).status).toBe(403);
    const eraser = (await keyWith(t.tenant_id, ['customers:erase'])).secret_key;
    expect((await erase(eraser)).status).toBe(200);
  });
});
