import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWebhookSecret, updateConnectionSecrets } from '../../db/connection-service';
import { sellOnWebProvider } from '../helpers/connections';
import { withTenant } from '../../db/tenant-tx';
import { REFUSALS_KEPT_PER_MINUTE } from '../../db/webhook-deliveries';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { testDb } from '../helpers/db';
import { call, newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/**
 * Two tenants, each with its own psp_a account and its own signing secret, as a hostile second
 * tenant would use them: validly signed events that name the other tenant's customers, ids and
 * app users. Nothing one tenant sends may change, shadow or read the other's records.
 */
describe('the event pipeline keeps tenants apart', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  type Side = { t: Awaited<ReturnType<typeof newTenant>>; account: string; pk: string };
  let A: Side;
  let B: Side;
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const target = () => `${api.dashboardRoot}/api/webhooks/psp_a`;
  const send = (side: Side, type: string, data: Record<string, unknown>, id?: string) =>
    control('/events', { type, target: target(), account: side.account, data, ...(id ? { id } : {}) }) as Promise<{
      id: string;
      status: number;
    }>;
  const deliveryOf = (side: Side, id: string) =>
    testDb()('webhook_deliveries').where({ tenant_id: side.t.tenant_id, provider: 'psp_a', event_id: id }).first();
  const settled = (side: Side, id: string) =>
    until(
      `${id} settled`,
      () => deliveryOf(side, id),
      (d) => d?.status === 'processed' || d?.status === 'failed',
    );
  const subscriptionsOf = (side: Side) =>
    testDb()('subscriptions').where({ tenant_id: side.t.tenant_id, provider: 'psp_a' });
  const sdk = (side: Side, user: string) => call(api.apiRoot, `/v1/sdk/subscribers/${user}`, side.pk);

  async function tenantWithAccount(name: string): Promise<Side> {
    const t = await newTenant(name);
    const { account } = await sellOnWebProvider({
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    });
    const app = await testDb()('apps').where({ tenant_id: t.tenant_id }).first('publishable_key_test');
    return { t, account, pk: app.publishable_key_test };
  }

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    worker = await startTestWorker({ config: { providerBaseUrls } });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    A = await tenantWithAccount('victim');
    B = await tenantWithAccount('attacker');
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it("B's signed cancellation and refund naming A's customer change nothing of A's", async () => {
    const checkout = await control('/checkout', {
      sku: 'pro_monthly',
      email: 'a-buyer@example.com',
      target: target(),
      account: A.account,
      mode: 'test',
      app_user_id: 'a_user',
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    await until(
      'A premium',
      () => sdk(A, 'a_user'),
      (r) => confirmedPremium(r.body),
    );

    const ids = { id: checkout.subscription_id, customer: checkout.customer_id };
    const deleted = await send(B, 'customer.subscription.deleted', ids);
    const refunded = await send(B, 'charge.refunded', { customer: checkout.customer_id });
    expect([deleted.status, refunded.status]).toEqual([200, 200]);
    // B's events are B's: stored and processed under B, against B's own records.
    for (const e of [deleted, refunded]) expect(await settled(B, e.id)).toMatchObject({ status: 'processed' });
    expect(await deliveryOf(A, deleted.id)).toBeUndefined();

    expect(await subscriptionsOf(A)).toEqual([
      expect.objectContaining({
        external_id: checkout.subscription_id,
        status: 'active',
        email: 'a-buyer@example.com',
      }),
    ]);
    expect((await sdk(A, 'a_user')).body).toMatchObject({
      is_premium: true,
      entitlements: [expect.objectContaining({ state: 'active' })],
    });
    // Whatever B's events describe lives in B's tenant only.
    expect((await subscriptionsOf(B)).every((s: any) => s.tenant_id === B.t.tenant_id)).toBe(true);
  });

  it("a bait event from B for a customer id does not capture A's later genuine events for it", async () => {
    const customer = `cus_shared_${crypto.randomBytes(6).toString('hex')}`;
    const sub = `sub_shared_${crypto.randomBytes(6).toString('hex')}`;
    const bait = await send(B, 'customer.subscription.created', {
      id: sub,
      customer,
      metadata: { app_user_id: 'b_bait' },
    });
    expect(await settled(B, bait.id)).toMatchObject({ status: 'processed' });

    const email = `a-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const created = await send(A, 'customer.subscription.created', {
      id: sub,
      customer,
      customer_email: email,
      metadata: { app_user_id: 'a_second' },
    });
    expect(await settled(A, created.id)).toMatchObject({ status: 'processed' });

    await until(
      'A second premium',
      () => sdk(A, 'a_second'),
      (r) => confirmedPremium(r.body),
    );
    const aSubs = await call(api.apiUrl, `/subscribers?email=${encodeURIComponent(email)}`, A.t.secret_key);
    expect(aSubs.body.data).toEqual([expect.objectContaining({ app_user_id: 'a_second', email })]);
    await refill(B.t.tenant_id);
    const bSubs = await call(api.apiUrl, '/subscribers?limit=200', B.t.secret_key);
    expect(JSON.stringify(bSubs.body)).not.toContain(email);
    expect(bSubs.body.data.some((s: any) => s.app_user_id === 'a_second')).toBe(false);
  });

  it("B cannot grant itself premium in A's app by naming A's app user", async () => {
    const forged = await send(B, 'customer.subscription.created', {
      id: `sub_forged_${crypto.randomBytes(4).toString('hex')}`,
      customer: `cus_forged_${crypto.randomBytes(4).toString('hex')}`,
      metadata: { app_user_id: 'a_never_paid' },
    });
    expect(await settled(B, forged.id)).toMatchObject({ status: 'processed' });
    expect((await sdk(A, 'a_never_paid')).body).toMatchObject({ is_premium: false, entitlements: [] });
  });

  it("an event id B used first does not shadow A's genuine event with the same id", async () => {
    const id = `evt_shared_${crypto.randomBytes(8).toString('hex')}`;
    const customer = `cus_id_${crypto.randomBytes(6).toString('hex')}`;
    const first = await send(
      B,
      'customer.subscription.created',
      { id: `sub_b_${crypto.randomBytes(4).toString('hex')}`, customer },
      id,
    );
    expect(first).toMatchObject({ id, status: 200 });
    const mine = await send(
      A,
      'customer.subscription.created',
      { id: `sub_a_${crypto.randomBytes(4).toString('hex')}`, customer, metadata: { app_user_id: 'a_same_id' } },
      id,
    );
    expect(mine).toMatchObject({ id, status: 200 });
    expect(await settled(A, id)).toMatchObject({ status: 'processed', delivery_count: 1 });
    expect(await settled(B, id)).toMatchObject({ status: 'processed', delivery_count: 1 });
    await until(
      'A premium by its own event',
      () => sdk(A, 'a_same_id'),
      (r) => confirmedPremium(r.body),
    );
  });

  it('unknown accounts and bad signatures get one answer that echoes nothing; what is kept is bounded', async () => {
    const huge = `acct_${'x'.repeat(200_000)}`;
    const unknown = await fetch(target(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'evt_1', type: 'charge.refunded', account: huge, data: { object: {} } }),
    });
    const unknownBody = await unknown.text();
    const bad = (await control('/events', {
      type: 'charge.refunded',
      target: target(),
      account: A.account,
      signature: 'bad',
    })) as { id: string; status: number };
    expect(unknown.status).toBe(400);
    expect(bad.status).toBe(400);
    const otherUnknown = await fetch(target(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'evt_2', account: 'acct_not_connected' }),
    });
    // The same words whether the account exists or the signature is wrong: a stranger learns nothing.
    const badBody = await fetch(target(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: JSON.stringify({ id: 'evt_3', account: A.account }),
    });
    expect(JSON.parse(unknownBody)).toEqual(await otherUnknown.json());
    expect(await badBody.json()).toEqual(JSON.parse(unknownBody));
    expect(unknownBody.length).toBeLessThan(300);
    const stored = await testDb()('webhook_deliveries')
      .where({ provider: 'psp_a', status: 'failed' })
      .whereNull('tenant_id')
      .orderBy('created_at', 'desc')
      .limit(5);
    expect(JSON.stringify(stored)).not.toContain('xxxxxxxxxx');
    expect(JSON.stringify(stored)).not.toContain('acct_not_connected');

    // A flood from nobody keeps at most REFUSALS_KEPT_PER_MINUTE rows a minute.
    const before = Number(
      (await testDb()('webhook_deliveries')
        .where({ provider: 'psp_a' })
        .whereNull('tenant_id')
        .count({ n: '*' })
        .first())!.n,
    );
    const flood = await Promise.all(
      Array.from({ length: REFUSALS_KEPT_PER_MINUTE * 3 }, (_, i) =>
        fetch(target(), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: `evt_f${i}`, account: `acct_flood_${i}` }),
        }).then((r) => r.status),
      ),
    );
    expect(new Set(flood)).toEqual(new Set([400]));
    const after = Number(
      (await testDb()('webhook_deliveries')
        .where({ provider: 'psp_a' })
        .whereNull('tenant_id')
        .count({ n: '*' })
        .first())!.n,
    );
    expect(after - before).toBeLessThanOrEqual(REFUSALS_KEPT_PER_MINUTE);
  });

  it('a deeply nested signed payload is refused by name, not a 500', async () => {
    const depth = 100_000;
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    // Signed with A's own secret, as A's provider would sign it (Stripe's scheme).
    const conn = await testDb()('provider_connections')
      .where({ tenant_id: A.t.tenant_id, provider: 'psp_a' })
      .first('id');
    const whsec = await withTenant(testDb(), A.t.tenant_id, (trx) => loadWebhookSecret(trx, worker.vault, conn.id));
    const body = `{"id":"evt_deep_${crypto.randomBytes(4).toString('hex')}","object":"event","account":"${A.account}","type":"customer.subscription.updated","created":${Math.floor(Date.now() / 1000)},"livemode":false,"data":{"object":${deep}}}`;
    const ts = Math.floor(Date.now() / 1000);
    const sig = crypto.createHmac('sha256', whsec).update(`${ts}.${body}`).digest('hex');
    const res = await fetch(target(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': `t=${ts},v1=${sig}` },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'webhook_refused',
      detail: expect.stringMatching(/nests deeper than 64 levels/),
    });
  });

  it('an event whose customer id is too long for an identity is refused by name at receipt; nothing is queued', async () => {
    const longId = `cus_${'a'.repeat(1200)}`;
    const sent = await send(A, 'customer.subscription.created', { id: 'sub_long', customer: longId });
    expect(sent.status).toBe(400);
    expect(await deliveryOf(A, sent.id)).toBeUndefined();
    const queued = await testDb()('webhook_outbox').whereRaw(`handover->>'customerKey' = ?`, [longId]).first();
    expect(queued).toBeUndefined();
    const failed = await call(api.apiUrl, '/webhooks?provider=psp_a&status=failed', A.t.secret_key);
    expect(failed.body.data.some((d: any) => /customer_id is 1204 characters long/.test(d.reason))).toBe(true);
  });
  it('a rotated signing secret takes effect on the very next event (the receipt cache re-reads on a failed check)', async () => {
    const side = await tenantWithAccount('rotating');
    const conn = await testDb()('provider_connections')
      .where({ tenant_id: side.t.tenant_id, provider: 'psp_a' })
      .first('id');
    const signed = (secret: string) => {
      const body = JSON.stringify({
        id: `evt_rot_${crypto.randomBytes(6).toString('hex')}`,
        object: 'event',
        account: side.account,
        type: 'customer.updated',
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        data: { object: { id: 'cus_rot', object: 'customer' } },
      });
      const ts = Math.floor(Date.now() / 1000);
      const sig = crypto.createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
      return fetch(target(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': `t=${ts},v1=${sig}` },
        body,
      }).then((r) => r.status);
    };
    const old = await withTenant(testDb(), side.t.tenant_id, (trx) => loadWebhookSecret(trx, worker.vault, conn.id));
    expect(await signed(old)).toBe(200); // now cached
    const rotated = `whsec_${crypto.randomBytes(24).toString('base64url')}`;
    await withTenant(testDb(), side.t.tenant_id, (trx) =>
      updateConnectionSecrets(trx, worker.vault, conn.id, { webhook_secret: rotated }),
    );
    expect(await signed(rotated)).toBe(200);
    expect(await signed(old)).toBe(400);
  });
});
