import { describe, expect, it } from 'vitest';
import { keyWith } from '../helpers/api';
import { testDb } from '../helpers/db';
import { expectAccessible, screenshot, signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

describe('dashboard: products and pricing', () => {
  const h = dashboardHarness();

  it('a product created and priced in the dashboard is what GET /v1/products serves; bad input is refused by name and writes nothing', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('products');
    await signUp(p, h.api.dashboardRoot, email);
    const { tenant_id, id: userId } = await testDb()('dashboard_users').where({ email }).first();
    const key = await keyWith(tenant_id, ['products:read']);
    const get = async (path: string) => {
      const r = await fetch(`${h.api.apiUrl}${path}`, { headers: { authorization: `Bearer ${key.secret_key}` } });
      return { status: r.status, body: await r.json() };
    };

    await p.getByRole('link', { name: 'Products' }).click();
    await expect(p.getByText('No product yet.').count()).resolves.toBe(1);
    await expectAccessible(p, 'products');
    await p.getByRole('link', { name: 'New product' }).click();
    await p.getByLabel('SKU').fill('premium_annual');
    await p.getByLabel('Name').fill('Premium, yearly');
    await p.getByLabel('Tier').selectOption('annual');
    await p.getByLabel('Android store product id').fill('premium-annual');
    await p.getByLabel('iOS store product id').fill('com.example.premium.annual');
    await p.getByLabel('Web', { exact: true }).fill('14');
    await p.getByLabel('Android', { exact: true }).fill('7');
    await p.getByLabel('Entitlement').fill('pro.annual');
    await p.getByRole('button', { name: 'Create product' }).click();
    await p.waitForURL(/\/products\/[0-9a-f-]{36}\?created=1$/);
    await expect(p.getByRole('status').textContent()).resolves.toContain('Product created');
    const id = new URL(p.url()).pathname.split('/').pop()!;

    // Prices in the currency's own units become minor units: 9.99 USD → 999, 1200 JPY → 1200.
    for (const [country, currency, amount] of [
      ['us', 'usd', '9.99'],
      ['DE', 'EUR', '8.49'],
      ['JP', 'JPY', '1,200'],
    ]) {
      await p.getByLabel('Country').fill(country);
      await p.getByLabel('Currency').fill(currency);
      await p.getByLabel('Price', { exact: true }).fill(amount);
      await p.getByRole('button', { name: 'Set price' }).click();
      await expect(p.getByRole('status').textContent()).resolves.toContain(`Price for ${country.toUpperCase()} set`);
    }
    await expectAccessible(p, 'product');
    await screenshot(p, 'product');

    const listed = await get('/products');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({
      id,
      sku: 'premium_annual',
      name: 'Premium, yearly',
      type: 'subscription',
      tier: 'annual',
      android_store_product_id: 'premium-annual',
      ios_store_product_id: 'com.example.premium.annual',
      trial_per_platform: { web: 14, android: 7 },
      entitlement: 'pro.annual',
      active: true,
      synced: false,
    });
    const detail = await get(`/products/${id}`);
    expect(detail.body.pricing.map((x: any) => [x.country, x.currency, x.amount_minor])).toEqual([
      ['DE', 'EUR', 849],
      ['JP', 'JPY', 1200],
      ['US', 'USD', 999],
    ]);

    // Changing a price replaces it; clearing every trial field clears trial_per_platform.
    await p.getByLabel('Country').fill('US');
    await p.getByLabel('Currency').fill('USD');
    await p.getByLabel('Price', { exact: true }).fill('11.99');
    await p.getByRole('button', { name: 'Set price' }).click();
    await p.getByLabel('Name').fill('Premium annual');
    await p.getByLabel('Web', { exact: true }).fill('');
    await p.getByLabel('Android', { exact: true }).fill('');
    // The form shows the entitlement it has; emptied, the product unlocks the default again.
    await expect(p.getByLabel('Entitlement').inputValue()).resolves.toBe('pro.annual');
    await p.getByLabel('Entitlement').fill('');
    await p.getByRole('button', { name: 'Save product' }).click();
    await expect(p.getByRole('status').textContent()).resolves.toContain('Saved');
    const edited = await get(`/products/${id}`);
    expect(edited.body).toMatchObject({
      name: 'Premium annual',
      trial_per_platform: null,
      tier: 'annual',
      entitlement: 'premium',
    });
    expect(edited.body.pricing.find((x: any) => x.country === 'US').amount_minor).toBe(1199);

    // Refusals: each names what is wrong, answers 4xx and changes nothing.
    const before = {
      products: await testDb()('products').where({ tenant_id }).count('* as n').first(),
      prices: await testDb()('prices').where({ tenant_id }).count('* as n').first(),
      version: edited.body.version,
    };
    for (const [country, currency, amount, says] of [
      ['XX', 'USD', '1', 'ISO 3166'],
      ['US', 'DOL', '1', 'ISO 4217'],
      ['US', 'USD', '9.999', 'at most'],
      ['JP', 'JPY', '12.5', 'at most'],
      ['US', 'USD', '-1', 'not a price'],
    ]) {
      await p.getByLabel('Country').fill(country);
      await p.getByLabel('Currency').fill(currency);
      await p.getByLabel('Price', { exact: true }).fill(amount);
      const answer = p.waitForResponse((r) => r.url().endsWith('/prices'));
      await p.getByRole('button', { name: 'Set price' }).click();
      expect((await answer).status()).toBe(400);
      await expect(p.getByRole('alert').textContent()).resolves.toContain(says);
    }
    // The browser's own min/max stops a 400-day trial; a form posted without a browser meets the server's rule.
    await p.getByLabel('Web', { exact: true }).fill('400');
    await p.getByRole('button', { name: 'Save product' }).click();
    expect(await p.getByLabel('Web', { exact: true }).evaluate((e: HTMLInputElement) => e.validity.rangeOverflow)).toBe(
      true,
    );
    const csrf = await p.locator('input[name=_csrf]').first().inputValue();
    const posted = await p.context().request.post(`${h.api.dashboardRoot}/products/${id}`, {
      form: { _csrf: csrf, name: 'Premium annual', type: 'subscription', tier: 'annual', trial_web: '400' },
    });
    expect(posted.status()).toBe(400);
    expect(await posted.text()).toContain('0–365');
    await p.getByLabel('Web', { exact: true }).fill('');
    // An entitlement the API would refuse is refused here by the same rule, named by its label.
    await p.getByLabel('Entitlement').fill('gold tier');
    const badEntitlement = p.waitForResponse(
      (r) => r.url().endsWith(`/products/${id}`) && r.request().method() === 'POST',
    );
    await p.getByRole('button', { name: 'Save product' }).click();
    expect((await badEntitlement).status()).toBe(400);
    await expect(p.getByRole('alert').textContent()).resolves.toMatch(/^Entitlement: 1–100 letters/);

    await p.goto(`${h.api.dashboardRoot}/products/new`);
    await p.getByLabel('SKU').fill('premium_annual');
    const dup = p.waitForResponse((r) => r.url().endsWith('/products') && r.request().method() === 'POST');
    await p.getByRole('button', { name: 'Create product' }).click();
    expect((await dup).status()).toBe(409);
    await expect(p.getByRole('alert').textContent()).resolves.toContain('already exists');
    await expectAccessible(p, 'product-new');
    await screenshot(p, 'product-new');
    await p.getByLabel('SKU').fill('Premium Annual!');
    await p.getByRole('button', { name: 'Create product' }).click();
    await expect(p.getByRole('alert').textContent()).resolves.toMatch(/^SKU: lower-case letters/);

    expect(await testDb()('products').where({ tenant_id }).count('* as n').first()).toEqual(before.products);
    expect(await testDb()('prices').where({ tenant_id }).count('* as n').first()).toEqual(before.prices);
    expect((await get(`/products/${id}`)).body.version).toBe(before.version);

    // Another tenant's product id is a 404 page, not a form.
    const other = await testDb()('tenants').insert({ name: 'other' }).returning('id');
    const [foreign] = await testDb()('products')
      .insert({ tenant_id: other[0].id, sku: 'theirs', name: 'Theirs' })
      .returning('id');
    const resp = await p.goto(`${h.api.dashboardRoot}/products/${foreign.id}`);
    expect(resp!.status()).toBe(404);
    expect(await p.getByText('Theirs').count()).toBe(0);

    // Every form write is the operation the API and the tools run, audited under its name as the person's.
    const audit = await testDb()('audit_entries')
      .where({ tenant_id, actor_type: 'user', actor_id: userId })
      .where('action', 'like', 'products.%')
      .orderBy('created_at')
      .select('action', 'outcome', 'detail');
    expect(audit.map((a: any) => `${a.action}:${a.outcome}`)).toEqual([
      'products.create:ok',
      ...Array(3).fill('products.set_pricing:ok'),
      'products.set_pricing:ok',
      'products.update:ok',
      // XX and DOL reach the operation; an amount that is no price in the currency never becomes a call.
      ...Array(2).fill('products.set_pricing:invalid_request'),
      'products.update:invalid_request',
      'products.update:invalid_request',
      'products.create:duplicate_sku',
      'products.create:invalid_request',
    ]);
    expect(
      audit.every(
        (a: any) => (typeof a.detail === 'string' ? JSON.parse(a.detail) : a.detail)?.surface === 'dashboard',
      ),
    ).toBe(true);
    const dashboardNamed = await testDb()('audit_entries')
      .where({ tenant_id })
      .where('action', 'like', 'dashboard.product%')
      .count('* as n')
      .first();
    expect(Number(dashboardNamed!.n)).toBe(0);
    await ctx.close();
  }, 120_000);
});
