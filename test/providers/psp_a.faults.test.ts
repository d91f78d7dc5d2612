import crypto from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../../providers/errors';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';
import { productSpec } from '../helpers/product-spec';

let emu: RunningEmulator;
let ctx: ProviderContext;
const adapter = createPspAAdapter();

const control = controlFor(() => emu.url, { strict: true });
const fault = (body: Record<string, unknown>) => control('POST', '/faults', body);

const spec = (over: Partial<ProductSpec> = {}) =>
  productSpec({
    tenant_id: 't',
    sku: 'sku',
    name: 'Pro',
    prices: [{ country: 'US', currency: 'USD', amount_minor: 999 }],
    ...over,
  });

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  const acct = (await control('POST', '/accounts', {})) as {
    account: string;
    credentials: { test: { secret_key: string } };
  };
  ctx = {
    baseUrl: emu.url,
    mode: 'test',
    credential: { secret_key: acct.credentials.test.secret_key },
    accountRef: acct.account,
  };
});
afterEach(async () => {
  await control('DELETE', '/faults');
});
afterAll(async () => {
  await emu?.close();
});

describe('psp_a fault classes', () => {
  it('a dropped connection is unreachable (retryable)', async () => {
    await fault({ mode: 'down' });
    const err = await adapter.checkReachable(ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect(err.retryable).toBe(true);
    await control('DELETE', '/faults');
    await expect(adapter.checkReachable(ctx)).resolves.toBeUndefined();
  });

  it('nothing listening is unreachable', async () => {
    const closed = await startEmulator(createEmulator, { port: 0 });
    await closed.close();
    const err = await adapter.listRemoteProducts({ ...ctx, baseUrl: closed.url }).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
  });

  it.each([500, 502, 503])('HTTP %i is unreachable (retryable) with the status', async (status) => {
    await fault({ mode: 'error', status });
    const err = await adapter.listRemoteProducts(ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
    expect(err.status).toBe(status);
  });

  it('429 is rate limited with Retry-After in ms', async () => {
    await fault({ mode: 'rate_limit', retry_after: 7 });
    const err = await adapter.upsertProduct(ctx, spec(), 'k-429').catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRateLimitedError);
    expect(err.retryAfterMs).toBe(7000);
    expect(err.retryable).toBe(true);
  });

  it('an injected 400 is a rejection (not retryable)', async () => {
    await fault({ mode: 'error', status: 400 });
    const err = await adapter.checkReachable(ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
  });

  it("Stripe's own 400 is a rejection carrying Stripe's reason", async () => {
    const s = spec({ prices: [{ country: 'XX', currency: 'ABC', amount_minor: 100 }] });
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    const err = await adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}`).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(400);
    expect(err.reason).toMatch(/invalid_request_error.*currency/i);
  });

  it('a fault limited to one route leaves the others working', async () => {
    await fault({ mode: 'error', status: 503, route: '/v1/prices' });
    const s = spec();
    const { external_id } = await adapter.upsertProduct(ctx, s, `p:${s.product_id}`);
    await expect(adapter.upsertPrices(ctx, external_id, s, `pr:${s.product_id}`)).rejects.toBeInstanceOf(
      ProviderUnreachableError,
    );
  });

  it('a slow provider past the timeout is unreachable', async () => {
    await fault({ mode: 'latency', ms: 1500 });
    const err = await adapter.checkReachable({ ...ctx, timeoutMs: 200 }).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderUnreachableError);
  });

  it('never puts the key in an error', async () => {
    const secret = `sk_test_${crypto.randomBytes(24).toString('hex')}`;
    const err = await adapter.checkReachable({ ...ctx, credential: { secret_key: secret } }).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(`${err.message} ${err.reason} ${JSON.stringify(err)}`).not.toContain(secret.slice(8));
  });
});
