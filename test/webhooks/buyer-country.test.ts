import { beforeAll, describe, expect, it } from 'vitest';
import { call, keyWith, newTenant } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { until } from '../helpers/until';

/**
 * A psp_a checkout whose buyer gave a country: Stripe's invoice (customer_address) and charge
 * (billing_details.address) carry it, the webhook path stores it on the subscription record, and
 * the record's revenue is counted under that country, at that country's price. Another tenant's
 * chart does not see it.
 */
describe('buyer country: a psp_a checkout lands in revenue by country', () => {
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  let other: Awaited<ReturnType<typeof newTenant>>;

  beforeAll(async () => {
    t = await newTenant('buyer-country');
    other = await newTenant('buyer-country-other');
    const { account, productId } = await sellOnWebProvider({
      emulatorUrl: stack.emulators.psp_a.url,
      vault: stack.worker.vault,
      apiUrl: stack.api.apiUrl,
      tenant: t,
    });
    // A German price besides the US one: a buyer in Germany is valued at it.
    await testDb()('prices').insert({
      tenant_id: t.tenant_id,
      product_id: productId,
      country: 'DE',
      currency: 'EUR',
      amount_minor: 899,
    });
    const r = await fetch(`${stack.emulators.psp_a.url}/__control/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sku: 'pro_monthly',
        email: 'buyer-de@example.com',
        target: `${stack.api.dashboardRoot}/api/webhooks/psp_a`,
        account,
        mode: 'test',
        app_user_id: 'buyer-de',
        trial_days: 0,
        country: 'DE',
      }),
    });
    const body = (await r.json()) as { events: { status: number }[] };
    expect(body.events.map((e) => e.status)).toEqual([200, 200, 200]);
  });

  it('the record carries DE, and revenue_by_country counts it under DE in EUR', async () => {
    const sub = await until(
      'the subscription written with its country',
      () => testDb()('subscriptions').where({ tenant_id: t.tenant_id, app_user_id: 'buyer-de' }).first(),
      (s) => s?.status === 'active' && s.country === 'DE',
    );
    expect(sub.country).toBe('DE');
    const key = (await keyWith(t.tenant_id, ['charts:read'])).secret_key;
    const chart = await call(stack.api.apiUrl, '/charts/revenue_by_country?mode=test&resolution=day', key);
    expect(chart.status).toBe(200);
    const series = (chart.body as { series: { key: string; values: (number | null)[] }[] }).series;
    expect(series.map((s) => s.key)).toEqual(['DE:EUR']);
    expect(series[0].values.filter((v) => v)).toEqual([899]);
    const filtered = await call(
      stack.api.apiUrl,
      '/charts/revenue_by_country?mode=test&resolution=day&country=US',
      key,
    );
    expect((filtered.body as { series: unknown[] }).series).toEqual([]);
    const otherKey = (await keyWith(other.tenant_id, ['charts:read'])).secret_key;
    const theirs = await call(stack.api.apiUrl, '/charts/revenue_by_country?mode=test&resolution=day', otherKey);
    expect((theirs.body as { series: unknown[] }).series).toEqual([]);
  });
});
