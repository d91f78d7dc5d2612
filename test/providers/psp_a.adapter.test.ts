import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { getOrPostControlFor } from '../helpers/emulator-control';
import { productSpec } from '../helpers/product-spec';

type State = Record<string, Record<string, unknown>[]>;

let emu: RunningEmulator;
let account: { account: string; credentials: { test: { secret_key: string }; live: { secret_key: string } } };
let ctx: ProviderContext;
const adapter = createPspAAdapter();

const control = getOrPostControlFor(() => emu.url);

async function state(kind: string, acct = account.account): Promise<Record<string, unknown>[]> {
  const s = await control<State>('/state');
  return (s[kind] ?? []).filter((o) => o._account === acct);
}

const spec = (over: Partial<ProductSpec> = {}) =>
  productSpec({
    tenant_id: 'tenant-1',
    sku: `pro_${crypto.randomBytes(3).toString('hex')}`,
    name: 'Pro monthly',
    prices: [
      { country: 'US', currency: 'USD', amount_minor: 999 },
      { country: 'DE', currency: 'EUR', amount_minor: 899 },
      { country: 'FR', currency: 'EUR', amount_minor: 899 },
      { country: 'GB', currency: 'GBP', amount_minor: 799 },
    ],
    ...over,
  });

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  account = await control('/accounts', {});
  ctx = {
    baseUrl: emu.url,
    mode: 'test',
    credential: { secret_key: account.credentials.test.secret_key },
    accountRef: account.account,
  };
});

afterAll(async () => {
  await emu?.close();
});

describe('psp_a adapter against its emulator', () => {
  it('checks reachability with the credential, and refuses a wrong key or a key of the other mode', async () => {
    await expect(adapter.checkReachable(ctx)).resolves.toBeUndefined();
    const wrong = { ...ctx, credential: { secret_key: 'sk_test_notARealKeyAtAll0000000000000' } };
    const err = await adapter.checkReachable(wrong).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(401);
    expect(err.reason).not.toContain('notARealKey');
    const mismatch = await adapter.checkReachable({ ...ctx, mode: 'live' }).catch((e) => e);
    expect(mismatch).toBeInstanceOf(ProviderRejectedError);
    expect(mismatch.opts.code).toBe('credential_mode_mismatch');
  });

  it('creates a product once, finds it on retry, and updates it in place', async () => {
    const s = spec();
    const first = await adapter.upsertProduct(ctx, s, `t1:product:${s.product_id}:v1`);
    const retry = await adapter.upsertProduct(ctx, s, `t1:product:${s.product_id}:v1`);
    expect(retry.external_id).toBe(first.external_id);
    const renamed = await adapter.upsertProduct(
      ctx,
      { ...s, name: 'Pro (monthly)', version: 2 },
      `t1:product:${s.product_id}:v2`,
    );
    expect(renamed.external_id).toBe(first.external_id);
    const mine = (await state('products')).filter(
      (p) => (p.metadata as Record<string, string>).product_id === s.product_id,
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      name: 'Pro (monthly)',
      active: true,
      metadata: { sku: s.sku, product_id: s.product_id },
    });
  });

  it('lists every remote product across pages (starting_after)', async () => {
    const requests: string[] = [];
    const observed = createPspAAdapter({ onResponse: (e) => requests.push(`${e.method} ${e.path}`) });
    const specs = Array.from({ length: 105 }, () => spec());
    for (let i = 0; i < specs.length; i += 15) {
      await Promise.all(specs.slice(i, i + 15).map((s) => adapter.upsertProduct(ctx, s, `bulk:${s.product_id}`)));
    }
    const remote = await observed.listRemoteProducts(ctx);
    expect(remote.length).toBeGreaterThanOrEqual(105);
    for (const s of specs) {
      expect(remote).toContainEqual(
        expect.objectContaining({ sku: s.sku, product_id: s.product_id, active: true, name: s.name }),
      );
    }
    const pages = requests.filter((r) => r.startsWith('GET /v1/products'));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.slice(1).every((p) => p.includes('starting_after='))).toBe(true);
  });

  it('prices every currency on one multi-currency price and replaces it when amounts change', async () => {
    const s = spec({
      prices: [
        { country: 'US', currency: 'USD', amount_minor: 999 },
        { country: 'DE', currency: 'EUR', amount_minor: 899 },
        { country: 'FR', currency: 'EUR', amount_minor: 899 },
        { country: 'ES', currency: 'EUR', amount_minor: 799 }, // conflicts with the EUR majority: not priced
        { country: 'GB', currency: 'GBP', amount_minor: 799 },
      ],
    });
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    const first = await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}:v1`);
    expect(first.priced_locales).toBe(4);
    expect(first.price_ids).toHaveLength(1);
    const again = await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}:v1`);
    expect(again.price_ids).toEqual(first.price_ids);
    const unchangedNewKey = await adapter.upsertPrices(ctx, external_id, { ...s, version: 2 }, `pr:${s.product_id}:v2`);
    expect(unchangedNewKey.price_ids).toEqual(first.price_ids);

    let prices = (await state('prices')).filter((p) => p.product === external_id);
    expect(prices).toHaveLength(1);
    expect(prices[0]).toMatchObject({
      currency: 'usd',
      unit_amount: 999,
      active: true,
      recurring: { interval: 'month', interval_count: 1 },
    });
    expect(prices[0]._currency_options).toMatchObject({ eur: { unit_amount: 899 }, gbp: { unit_amount: 799 } });

    const raised = {
      ...s,
      version: 3,
      prices: s.prices.map((p) => (p.currency === 'USD' ? { ...p, amount_minor: 1099 } : p)),
    };
    const second = await adapter.upsertPrices(ctx, external_id, raised, `pr:${s.product_id}:v3`);
    expect(second.price_ids[0]).not.toBe(first.price_ids[0]);
    prices = (await state('prices')).filter((p) => p.product === external_id);
    expect(prices.filter((p) => p.active)).toHaveLength(1);
    expect(prices.find((p) => p.id === first.price_ids[0])?.active).toBe(false);

    const cleared = await adapter.upsertPrices(
      ctx,
      external_id,
      { ...s, version: 4, prices: [] },
      `pr:${s.product_id}:v4`,
    );
    expect(cleared).toEqual({ priced_locales: 0, price_ids: [] });
    prices = (await state('prices')).filter((p) => p.product === external_id);
    expect(prices.every((p) => p.active === false)).toBe(true);
  });

  it('bills tiers on the right interval and non-subscriptions once', async () => {
    for (const [tier, interval, count] of [
      ['weekly', 'week', 1],
      ['quarterly', 'month', 3],
      ['annual', 'year', 1],
    ] as const) {
      const s = spec({ tier });
      const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
      const { price_ids } = await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}`);
      const price = (await state('prices')).find((p) => p.id === price_ids[0]);
      expect(price?.recurring).toMatchObject({ interval, interval_count: count });
    }
    const oneTime = spec({ type: 'consumable', tier: null });
    const { external_id } = await adapter.upsertProduct(ctx, oneTime, `p:${oneTime.product_id}`);
    const { price_ids } = await adapter.upsertPrices(ctx, external_id, oneTime, `pr:${oneTime.product_id}`);
    expect((await state('prices')).find((p) => p.id === price_ids[0])).toMatchObject({
      type: 'one_time',
      recurring: null,
    });
  });

  it('keeps one active payment link per app and product, tagged with the app id', async () => {
    const s = spec({ trial_days: 7 });
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}:v1`);
    const link = await adapter.ensurePaymentLink(ctx, external_id, s, 'app-1', `pl:${s.product_id}:app-1:v1`);
    expect(link.kind).toBe('payment_link');
    expect(link.external_id).toMatch(/^plink_/);
    expect(link.url).toContain('/b/test_');
    expect(
      (await adapter.ensurePaymentLink(ctx, external_id, s, 'app-1', `pl:${s.product_id}:app-1:v1`)).external_id,
    ).toBe(link.external_id);
    expect(
      (await adapter.ensurePaymentLink(ctx, external_id, s, 'app-1', `pl:${s.product_id}:app-1:v2`)).external_id,
    ).toBe(link.external_id);
    const other = await adapter.ensurePaymentLink(ctx, external_id, s, 'app-2', `pl:${s.product_id}:app-2:v1`);
    expect(other.external_id).not.toBe(link.external_id);

    const links = (await state('payment_links')).filter(
      (l) => (l.metadata as Record<string, string>).product_id === s.product_id,
    );
    expect(links).toHaveLength(2);
    const stored = links.find((l) => l.id === link.external_id)!;
    expect(stored.metadata).toMatchObject({ app_id: 'app-1', sku: s.sku, trial_days: '7' });
    expect(stored.subscription_data).toMatchObject({ trial_period_days: 7, metadata: { sku: s.sku, app_id: 'app-1' } });
    expect(stored.allow_promotion_codes).toBe(true);

    // A new price makes a new link for each app; the old one stops selling.
    const raised = { ...s, version: 2, prices: s.prices.map((p) => ({ ...p, amount_minor: p.amount_minor + 100 })) };
    await adapter.upsertPrices(ctx, external_id, raised, `pr:${s.product_id}:v2`);
    const moved = await adapter.ensurePaymentLink(ctx, external_id, raised, 'app-1', `pl:${s.product_id}:app-1:v3`);
    expect(moved.external_id).not.toBe(link.external_id);
    const after = (await state('payment_links')).filter(
      (l) =>
        (l.metadata as Record<string, string>).app_id === 'app-1' &&
        (l.metadata as Record<string, string>).product_id === s.product_id,
    );
    expect(after.filter((l) => l.active).map((l) => l.id)).toEqual([moved.external_id]);
  });

  it('refuses a payment link for a product without a price', async () => {
    const s = spec({ prices: [] });
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    const err = await adapter.ensurePaymentLink(ctx, external_id, s, 'app-1', 'k').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
  });

  it('stops sales: archives the product and deactivates its links', async () => {
    const s = spec();
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}`);
    await adapter.ensurePaymentLink(ctx, external_id, s, 'app-1', `pl:${s.product_id}:1`);
    await adapter.ensurePaymentLink(ctx, external_id, s, 'app-2', `pl:${s.product_id}:2`);
    await adapter.stopSales(ctx, external_id, s);
    await adapter.stopSales(ctx, external_id, s); // again: nothing left to stop
    expect((await state('products')).find((p) => p.id === external_id)?.active).toBe(false);
    const links = (await state('payment_links')).filter(
      (l) => (l.metadata as Record<string, string>).product_id === s.product_id,
    );
    expect(links).toHaveLength(2);
    expect(links.every((l) => l.active === false)).toBe(true);
    const remote = await adapter.listRemoteProducts(ctx);
    expect(remote.find((p) => p.external_id === external_id)?.active).toBe(false);
    await expect(adapter.stopSales(ctx, 'prod_neverCreated', spec())).resolves.toBeUndefined();
  });

  it('keeps test and live objects apart, and accounts apart', async () => {
    const s = spec();
    await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    const live: ProviderContext = {
      ...ctx,
      mode: 'live',
      credential: { secret_key: account.credentials.live.secret_key },
    };
    expect((await adapter.listRemoteProducts(live)).find((p) => p.product_id === s.product_id)).toBeUndefined();
    const { external_id } = await adapter.upsertProduct(live, s, `p:${s.product_id}:live`);
    expect(
      (await state('products'))
        .filter((p) => p.id === external_id)
        .map((p) => p.livemode)
        .sort(),
    ).toEqual([false, true]);

    const other = await control<typeof account>('/accounts', {});
    const intruder: ProviderContext = { ...ctx, credential: { secret_key: other.credentials.test.secret_key } };
    const err = await adapter.listRemoteProducts(intruder).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(403);
    const own = await adapter.listRemoteProducts({ ...intruder, accountRef: other.account });
    expect(own).toEqual([]);
  });
});

/**
 * A proxy in front of the emulator that lets requests through but drops the answers of
 * chosen ones: the provider did the work, the caller never heard back.
 */
async function lossyProxy(upstream: string, drop: (method: string, path: string) => boolean) {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const upstreamRes = await fetch(`${upstream}${req.url}`, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers)
            .filter(([k]) => !['host', 'connection', 'content-length'].includes(k))
            .map(([k, v]) => [k, String(v)]),
        ),
        body: req.method === 'GET' ? undefined : body,
      });
      const text = await upstreamRes.text();
      if (drop(req.method ?? '', req.url ?? '')) {
        req.socket.destroy();
        return;
      }
      res.writeHead(upstreamRes.status, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('psp_a idempotent retries', () => {
  it('a write whose answer was lost, retried with the same key, leaves exactly one object', async () => {
    const s = spec();
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}`);
    let dropped = 0;
    // stripe-node re-sends once on a reset connection; drop both answers so the activity sees the failure.
    const proxy = await lossyProxy(
      emu.url,
      (method, path) => method === 'POST' && path === '/v1/payment_links' && dropped++ < 2,
    );
    try {
      const viaProxy = { ...ctx, baseUrl: proxy.url };
      const key = `pl:${s.product_id}:app-x:v1`;
      const err = await adapter.ensurePaymentLink(viaProxy, external_id, s, 'app-x', key).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderUnreachableError);
      expect(dropped).toBe(2);
      const before = (await state('payment_links')).filter(
        (l) => (l.metadata as Record<string, string>).product_id === s.product_id,
      );
      expect(before).toHaveLength(1); // the provider did create it

      const retried = await adapter.ensurePaymentLink(viaProxy, external_id, s, 'app-x', key);
      const after = (await state('payment_links')).filter(
        (l) => (l.metadata as Record<string, string>).product_id === s.product_id,
      );
      expect(after).toHaveLength(1);
      expect(retried.external_id).toBe(after[0].id);
    } finally {
      await proxy.close();
    }
  });

  it('a lost price create is replayed, not repeated', async () => {
    const s = spec();
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    const lost = new Map<string, number>();
    const proxy = await lossyProxy(emu.url, (method, path) => {
      if (method !== 'POST' || path !== '/v1/prices') return false;
      const n = lost.get(path) ?? 0;
      lost.set(path, n + 1);
      return n < 2;
    });
    try {
      const viaProxy = { ...ctx, baseUrl: proxy.url };
      await expect(adapter.upsertPrices(viaProxy, external_id, s, `pr:${s.product_id}:v1`)).rejects.toBeInstanceOf(
        ProviderUnreachableError,
      );
      const priced = await adapter.upsertPrices(viaProxy, external_id, s, `pr:${s.product_id}:v1`);
      expect((await state('prices')).filter((p) => p.product === external_id).map((p) => p.id)).toEqual(
        priced.price_ids,
      );
    } finally {
      await proxy.close();
    }
  });
});
