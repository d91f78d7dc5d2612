import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvenConnection } from '../helpers/connections';
import { withTenant } from '../../db/tenant-tx';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { createAdapters } from '../../providers';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { testDb } from '../helpers/db';
import { call, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';

/**
 * Issue 42 (low): psp_b and psp_c read the SKU from metadata the buyer sets at checkout (Paddle
 * `custom_data` on the transaction and subscription, Razorpay `notes` on the subscription and its
 * payments) before the seller's price, and provisional access granted it at once. A buyer paying
 * the cheap price while naming the premium SKU got premium. Now only the seller's side counts: the
 * Paddle price's custom_data, the Razorpay plan's notes (read from the plan the subscription names).
 */
describe.each(['psp_b', 'psp_c'] as const)('%s: the SKU is the seller’s', (provider) => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  const products: Record<string, string> = {};
  const emulator = (path: string, body?: unknown) =>
    fetch(`${emulators[provider].url}/__control${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    }).then((r) => r.json());
  const target = () => `${api.dashboardRoot}/api/webhooks/${provider}`;
  const sdk = (user: string) => call(api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key);

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
    t = await newTenant(`seller-sku-${provider}`);
    const acct = await createEmulatorAccount(emulators[provider].url);
    account = acct.account;
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      await createProvenConnection(trx, worker.vault, {
        provider,
        account_ref: acct.account,
        credentials: acct.credentials,
        webhook_secret: acct.webhook_secret,
      });
      for (const [sku, amount] of [
        ['basic_monthly', 199],
        ['pro_monthly', 2999],
      ] as const) {
        const [p] = await trx('products')
          .insert({ tenant_id: t.tenant_id, sku, name: sku, tier: 'monthly' })
          .returning('id');
        await trx('prices').insert({
          tenant_id: t.tenant_id,
          product_id: p.id,
          country: 'US',
          currency: 'USD',
          amount_minor: amount,
        });
        products[sku] = p.id;
      }
    });
    for (const id of Object.values(products))
      expect(
        (await call(api.apiUrl, `/products/${id}/sync?provider=${provider}`, t.secret_key, { method: 'POST' })).body.ok,
      ).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('the cheap price with the premium SKU in the buyer’s metadata grants the cheap product, provisional access included', async () => {
    // An honest checkout of the cheap product: the subscription (and, for psp_c, its plan) the forged event reuses.
    const honest = await emulator('/checkout', {
      sku: 'basic_monthly',
      email: 'honest@example.com',
      target: target(),
      account,
      mode: 'test',
      app_user_id: 'u_honest',
    });
    expect(honest.events.every((e: { status: number }) => e.status === 200)).toBe(true);
    const cheap = await until(
      'the honest buyer premium',
      () => sdk('u_honest'),
      (r) => confirmedPremium(r.body),
    );
    expect(cheap.body.entitlements.map((e: { sku: string }) => e.sku)).toEqual(['basic_monthly']);

    // The buyer's own metadata names the premium SKU; what they pay for is the cheap price (plan).
    const suffix = crypto.randomBytes(4).toString('hex');
    const forged =
      provider === 'psp_b'
        ? {
            type: 'subscription.created',
            // Over the latest subscription, whose line item is the cheap price with the seller's custom_data.
            data: {
              id: `sub_forged${suffix}`,
              customer_id: `ctm_forged${suffix}`,
              custom_data: { sku: 'pro_monthly', app_user_id: 'u_forged', email: 'forged@example.com' },
            },
          }
        : {
            type: 'subscription.activated',
            data: {
              subscription_id: `sub_forged${suffix}`,
              customer_id: `cust_forged${suffix}`,
              sku: 'pro_monthly', // into the subscription's notes, as the buyer's checkout sets them
              app_user_id: 'u_forged',
              subscription: {
                entity: {
                  plan_id: ((await emulator('/state')).subscriptions as { id: string; plan_id: string }[]).find(
                    (s) => s.id === honest.subscription_id,
                  )!.plan_id,
                },
              },
            },
          };
    const sent = await emulator('/events', { ...forged, target: target(), account });
    expect(sent.status).toBe(200);

    // At receipt: any provisional grant is for the product the price is, never the one the buyer named.
    const grants = await testDb()('provisional_access')
      .where({ tenant_id: t.tenant_id, app_user_id: 'u_forged', kind: 'grant' })
      .select('product_id');
    expect(grants.length).toBeGreaterThan(0);
    for (const g of grants) expect(g.product_id).toBe(products.basic_monthly);
    const atReceipt = await sdk('u_forged');
    expect(atReceipt.body.entitlements.map((e: { sku: string }) => e.sku)).toEqual(['basic_monthly']);

    // And once the workflow has written it: the cheap product, nothing premium.
    const confirmed = await until(
      'the forged subscription written',
      () => sdk('u_forged'),
      (r) => confirmedPremium(r.body),
    );
    expect(confirmed.body.entitlements.map((e: { sku: string }) => e.sku)).toEqual(['basic_monthly']);
    const subs = await testDb()('subscriptions')
      .where({ tenant_id: t.tenant_id, provider, external_id: `sub_forged${suffix}` })
      .select('product_id');
    expect(subs).toEqual([{ product_id: products.basic_monthly }]);
  });
});
