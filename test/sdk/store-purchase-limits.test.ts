import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { purchaseKey } from '../../providers/purchase-ref';
import { storePurchaseWorkflowId } from '../../temporal/workflow-starts';
import { CLIENT_LIMITS } from '../../api/sdk/limits';

/**
 * A made-up purchase token must be cheap to refuse: the same unknown token is answered from a
 * short negative cache (no workflow, no store call), and each app user has a small
 * registration bucket spent only when a workflow is about to start.
 */
describe('store purchase registration limits', () => {
  let s: StoreStack;
  const android = (token: string, user: string) => ({
    app_user_id: user,
    provider: 'store_android',
    product_id: 'premium_monthly',
    purchase_token: token,
  });
  const bucket = (name: string) =>
    testDb()('client_rate_limit_buckets').where({ tenant_id: s.tenant.tenant_id, bucket: name }).first();

  beforeAll(async () => {
    s = await startStoreStack('store-limits');
  });
  afterAll(async () => s?.close());

  it('a token the store answered 404 for is refused again without calling the store', async () => {
    const first = await s.register(android('made-up-token-1', 'm_user'));
    expect(first).toMatchObject({ status: 404, body: { error: 'purchase_not_found' } });
    // Were the store called again it would answer 503 now; the cached 404 never asks it.
    await s.control.store_android('POST', '/faults', { mode: 'error', status: 503, route: '/androidpublisher/' });
    try {
      const again = await s.register(android('made-up-token-1', 'm_user'));
      expect(again).toMatchObject({ status: 404, body: { error: 'purchase_not_found' } });
      // The cached refusal spent no registration token either (one workflow ran: one token).
      expect(Math.floor((await bucket('reg:m_user')).tokens)).toBe(CLIENT_LIMITS.registration.capacity - 1);
    } finally {
      await s.control.store_android('DELETE', '/faults');
    }
    // The cache is per tenant and holds only the hash.
    const rows = await testDb()('store_purchase_misses').where({ tenant_id: s.tenant.tenant_id });
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain('made-up-token-1');
  });

  it('an app user out of registrations gets 429 rate_limited with Retry-After, and no workflow starts; other users still register', async () => {
    await testDb()('client_rate_limit_buckets').insert({
      tenant_id: s.tenant.tenant_id,
      bucket: 'reg:loop_user',
      tokens: 0,
      refreshed_at: testDb().raw("now() + interval '1 hour'"),
    });
    const before = await bucket('reg:loop_user');
    const r = await s.register(android('made-up-token-2', 'loop_user'));
    expect(r).toMatchObject({
      status: 429,
      body: { error: 'rate_limited', detail: expect.stringMatching(/registrations/) },
    });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('ratelimit-limit')).toBe(String(CLIENT_LIMITS.registration.capacity));
    expect(await bucket('reg:loop_user')).toEqual(before);
    const handle = s.worker.client.workflow.getHandle(
      storePurchaseWorkflowId(s.tenant.tenant_id, 'store_android', purchaseKey('store_android', 'made-up-token-2')),
    );
    await expect(handle.describe()).rejects.toThrow(/not found/i);

    const { purchase_token } = await s.control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      account: s.accounts.store_android,
      app_user_id: 'paying_user',
    });
    expect(await s.register(android(purchase_token, 'paying_user'))).toMatchObject({
      status: 200,
      body: { is_premium: true },
    });
  });

  it('registrations draw from the client buckets, never from the management bucket', async () => {
    await testDb()('client_rate_limit_buckets')
      .insert({
        tenant_id: s.tenant.tenant_id,
        bucket: 'sdk',
        tokens: 0,
        refreshed_at: testDb().raw("now() + interval '1 hour'"),
      })
      .onConflict(['tenant_id', 'bucket'])
      .merge();
    const r = await s.register(android('made-up-token-3', 'x_user'));
    expect(r).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(await testDb()('rate_limit_buckets').where({ tenant_id: s.tenant.tenant_id }).first()).toBeUndefined();
  });
});
