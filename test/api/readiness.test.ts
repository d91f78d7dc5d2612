import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { createVault, generateMasterKey } from '../../vault/vault';
import { testDb } from '../helpers/db';
import { call, keyWith, newTenant, startApi } from '../helpers/api';

const vault = createVault(generateMasterKey());

/** A tenant with psp_a (test credential only), psp_b (everything), store_android (live credential). */
async function seededTenant(name: string) {
  const t = await newTenant(name);
  const db = testDb();
  await withTenant(db, t.tenant_id, async (trx) => {
    await createConnection(trx, vault, {
      provider: 'psp_a',
      account_ref: `acct_${t.tenant_id.slice(0, 8)}`,
      credentials: { test: { secret_key: 'sk_test_x' } },
    });
    await createConnection(trx, vault, {
      provider: 'psp_b',
      account_ref: `sel_${t.tenant_id.slice(0, 8)}`,
      credentials: { test: { api_key: 'pdl_test' }, live: { api_key: 'pdl_live' } },
      webhook_secret: 'whsec',
    });
    await createConnection(trx, vault, {
      provider: 'store_android',
      account_ref: `com.example.${t.tenant_id.slice(0, 8)}`,
      credentials: { live: { service_account_json: '{}' } },
    });
    const [p] = await trx('products')
      .insert({ tenant_id: t.tenant_id, sku: 'pro_monthly', tier: 'monthly', version: 3 })
      .returning('id');
    for (const mode of ['test', 'live']) {
      await trx('product_provider_refs').insert({
        tenant_id: t.tenant_id,
        product_id: p.id,
        provider: 'psp_b',
        mode,
        external_id: `pro_${mode}`,
        synced_version: 3,
      });
    }
    // psp_a holds a stale object (an older version): not a sync of the current product.
    await trx('product_provider_refs').insert({
      tenant_id: t.tenant_id,
      product_id: p.id,
      provider: 'psp_a',
      mode: 'test',
      external_id: 'prod_old',
      synced_version: 2,
    });
    await trx('product_provider_refs').insert({
      tenant_id: t.tenant_id,
      product_id: p.id,
      provider: 'store_android',
      mode: 'live',
      external_id: 'pro_monthly',
      synced_version: 3,
    });
  });
  return t;
}

describe('GET /readiness', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it('one row per configured provider, every field, summary counts that add up (both hosts)', async () => {
    const t = await seededTenant('ready');
    for (const base of [api.apiUrl, api.altUrl]) {
      const r = await call(base, '/readiness', t.secret_key);
      expect(r.status).toBe(200);
      expect(r.body.tenant_id).toBe(t.tenant_id);
      const by = Object.fromEntries(r.body.providers.map((p: any) => [p.provider, p]));
      expect(Object.keys(by)).toEqual(['psp_a', 'psp_b', 'store_android']);
      expect(by.psp_a).toMatchObject({ test_ready: false, live_ready: false, manual_steps: null });
      expect(by.psp_a.human_action).toMatch(/Run a sync/); // test credential is there; the object is stale
      expect(by.psp_b).toMatchObject({ test_ready: true, live_ready: true, human_action: null });
      expect(by.store_android).toMatchObject({
        auth_kind: 'store',
        test_mechanism: 'license_tester',
        test_ready: false,
        live_ready: true,
        console_url: 'https://play.google.com/console',
      });
      expect(by.store_android.manual_steps.length).toBeGreaterThan(3);
      expect(r.body.summary).toEqual({ total: 3, needs_manual_action: 1, live_ready: 2, test_ready: 1 });
    }
  });

  it('a store row turns green by itself when a sandbox purchase reaches the service', async () => {
    const t = await seededTenant('sandbox');
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').insert({
        tenant_id: t.tenant_id,
        app_user_id: 'tester',
        provider: 'store_android',
        state: 'active',
        is_sandbox: true,
      }),
    );
    const r = await call(api.apiUrl, '/readiness', t.secret_key);
    const android = r.body.providers.find((p: any) => p.provider === 'store_android');
    expect(android).toMatchObject({ test_ready: true, manual_steps: null, console_url: null, human_action: null });
    expect(r.body.summary.needs_manual_action).toBe(0);
  });

  it('a live (non-sandbox) entitlement is not test evidence', async () => {
    const t = await seededTenant('live-ent');
    await withTenant(testDb(), t.tenant_id, (trx) =>
      trx('entitlements').insert({
        tenant_id: t.tenant_id,
        app_user_id: 'buyer',
        provider: 'store_android',
        state: 'active',
        is_sandbox: false,
      }),
    );
    const r = await call(api.apiUrl, '/readiness', t.secret_key);
    expect(r.body.providers.find((p: any) => p.provider === 'store_android').test_ready).toBe(false);
  });

  it("another tenant's evidence and connections never show", async () => {
    const a = await seededTenant('iso-a');
    await withTenant(testDb(), a.tenant_id, (trx) =>
      trx('entitlements').insert({
        tenant_id: a.tenant_id,
        app_user_id: 'tester',
        provider: 'store_android',
        state: 'active',
        is_sandbox: true,
      }),
    );
    const b = await newTenant('iso-b');
    const r = await call(api.apiUrl, '/readiness', b.secret_key);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      tenant_id: b.tenant_id,
      providers: [],
      summary: { total: 0, needs_manual_action: 0, live_ready: 0, test_ready: 0 },
    });
  });

  it('needs readiness:read; no credential or secret in the answer', async () => {
    const t = await seededTenant('scope');
    const k = await keyWith(t.tenant_id, ['products:read']);
    const r = await call(api.apiUrl, '/readiness', k.secret_key);
    expect(r.status).toBe(403);
    expect(r.body.detail).toContain('readiness:read');
    const ok = await call(api.apiUrl, '/readiness', t.secret_key);
    expect(JSON.stringify(ok.body)).not.toMatch(/sk_test_x|pdl_live|pdl_test|whsec/);
  });
});
