import { describe, expect, it } from 'vitest';
import { CHARTS } from '../../domain/charts/chart-list';
import { testDb } from '../helpers/db';
import { seedSubscription } from '../helpers/chart-seed';
import { dashboardHarness, expectAccessible, screenshot, signUp, uniqueEmail } from './helpers/browser';

/**
 * The charts in the dashboard, in Chromium: every chart page draws its SVG with a table under
 * it, the figures are the API's, the CSV download is the chart's, and axe finds nothing at
 * desktop and phone width.
 */
describe('dashboard charts', () => {
  const h = dashboardHarness();

  it('every chart page draws, tables its figures, offers CSV and passes axe', async () => {
    const ctx = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await ctx.newPage();
    const email = uniqueEmail('charts');
    await signUp(p, h.api.dashboardRoot, email);
    const { tenant_id } = await testDb()('dashboard_users').where({ email }).first();
    const [product] = await testDb()('products').insert({ tenant_id, sku: 'plus', tier: 'monthly' }).returning('id');
    await testDb()('prices').insert({
      tenant_id,
      product_id: product.id,
      country: 'DE',
      currency: 'EUR',
      amount_minor: 990,
    });
    await seedSubscription(tenant_id, { moves: [['2026-02-10T10:00:00Z', 'active']] }, product.id);
    await seedSubscription(
      tenant_id,
      {
        moves: [
          ['2026-03-28T10:00:00Z', 'trialing'],
          ['2026-04-04T10:00:00Z', 'active'],
          ['2026-05-20T10:00:00Z', 'refunded'],
        ],
      },
      product.id,
    );

    await p.goto(`${h.api.dashboardRoot}/charts`);
    for (const c of CHARTS) await expect(p.getByRole('link', { name: c.title })).toBeDefined();
    await expectAccessible(p, 'charts list');

    const query = 'from=2026-01-01&to=2026-06-30';
    for (const c of CHARTS) {
      await p.goto(`${h.api.dashboardRoot}/charts/${c.name}?${query}`);
      expect(await p.locator('h1').textContent()).toBe(c.title);
      expect(await p.locator('figure.chart svg[role="img"]').count()).toBeGreaterThan(0);
      expect(await p.locator('figure.chart table').count()).toBeGreaterThan(0);
      await expectAccessible(p, `chart ${c.name}`);
    }

    // The MRR page shows the API's figures: 9.90 EUR from February, 19.80 from April, 9.90 after the refund.
    await p.goto(`${h.api.dashboardRoot}/charts/mrr?${query}`);
    const cells = await p.locator('figure.chart tbody td').allTextContents();
    expect(cells).toEqual(['0.00 EUR', '9.90 EUR', '9.90 EUR', '19.80 EUR', '9.90 EUR', '9.90 EUR']);
    await screenshot(p, 'charts-mrr');

    const [download] = await Promise.all([
      p.waitForEvent('download'),
      p.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const file = await download.path();
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(file!, 'utf8')).toBe(
      'period,MRR (EUR)\r\n2026-01-01,0\r\n2026-02-01,990\r\n2026-03-01,990\r\n2026-04-01,1980\r\n2026-05-01,990\r\n2026-06-01,990\r\n',
    );

    // In one currency with the tenant's rate (EUR→USD 1.1): the currency field, the figures converted, axe clean.
    await testDb()('exchange_rates').insert({
      tenant_id,
      from_currency: 'EUR',
      to_currency: 'USD',
      valid_from: '2026-01-01',
      rate: 1.1,
    });
    await p.goto(`${h.api.dashboardRoot}/charts/mrr?${query}`);
    await p.getByLabel('currency').fill('USD');
    await p.getByRole('button', { name: 'Show' }).click();
    await p.waitForURL(/currency=USD/);
    expect(await p.locator('figure.chart tbody td').allTextContents()).toEqual([
      '0.00 USD',
      '10.89 USD',
      '10.89 USD',
      '21.78 USD',
      '10.89 USD',
      '10.89 USD',
    ]);
    await expectAccessible(p, 'chart mrr in USD');
    const noRate = await p.goto(`${h.api.dashboardRoot}/charts/mrr?${query}&currency=GBP`);
    expect(noRate!.status()).toBe(200);
    expect(await p.locator('main').textContent()).toContain('unconverted, for lack of a rate in some period: EUR');

    // Bad input says which setting is wrong, and an unknown chart is a 404.
    const bad = await p.goto(`${h.api.dashboardRoot}/charts/mrr?resolution=year`);
    expect(bad!.status()).toBe(400);
    expect(await p.getByRole('alert').first().textContent()).toContain('resolution');
    expect((await p.goto(`${h.api.dashboardRoot}/charts/nope`))!.status()).toBe(404);

    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(`${h.api.dashboardRoot}/charts/retention?${query}`);
    await expectAccessible(p, 'retention at phone width');
    await screenshot(p, 'charts-retention-phone');
    await ctx.close();
  }, 180_000);
});
