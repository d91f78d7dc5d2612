import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { OPERATIONS } from '../../operations';
import { seedDemoTenant } from '../../seed/demo';
import { testDb } from '../helpers/db';
import { assertMatchesOpenApi, call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';

const restOps = OPERATIONS.filter((o) => o.rest);

/**
 * The spec's endpoint → scope table, complete (some endpoints' operations arrive with later
 * issues). Stated here, not read from production code, so the operation table is held to it.
 */
const ENDPOINT_SCOPES: Record<string, string> = {
  'GET /tenant': 'tenant:read',
  'GET /readiness': 'readiness:read',
  'GET /products': 'products:read',
  'GET /products/{id}': 'products:read',
  'POST /products/{id}/sync': 'products:sync',
  // The catalogue writes the CI client makes (docs/ci.md).
  'POST /products': 'products:write',
  'POST /products/{product_id}/prices': 'products:write',
  'GET /providers': 'providers:read',
  'GET /sync': 'products:read',
  'POST /sync': 'products:sync',
  'GET /sync/events': 'products:read',
  'GET /subscribers': 'subscribers:read',
  'GET /entitlements': 'subscribers:read',
  'GET /coupons': 'coupons:read',
  'GET /paywall': 'paywall:read',
  'GET /webhooks': 'webhooks:read',
  'GET /audit': 'audit:read',
  'GET /charts': 'charts:read',
  'GET /charts/{name}': 'charts:read',
  // Outbound webhooks (issue #20); their own matrix, with real ids and bodies: test/outbound/scopes.test.ts.
  'GET /webhook-endpoints': 'webhooks:read',
  'GET /webhook-endpoints/{id}': 'webhooks:read',
  'POST /webhook-endpoints': 'webhooks:write',
  'PATCH /webhook-endpoints/{id}': 'webhooks:write',
  'DELETE /webhook-endpoints/{id}': 'webhooks:write',
  'POST /webhook-endpoints/{id}/rotate-secret': 'webhooks:write',
  'GET /outbound-events': 'webhooks:read',
  'POST /outbound-events/{id}/replay': 'webhooks:write',
  'GET /outbound-deliveries': 'webhooks:read',
  'GET /outbound-deliveries/{id}/attempts': 'webhooks:read',
  'POST /outbound-deliveries/replay': 'webhooks:write',
  // Imports (issue #29; test/imports/imports-api.test.ts).
  'POST /imports': 'imports:write',
  'GET /imports/{id}': 'imports:read',
  'GET /imports': 'imports:read',
  // The support desk; its own matrix, with a real customer and grant: test/api/customers.test.ts.
  'GET /customers/{app_user_id}': 'customers:read',
  'POST /customers/{app_user_id}/grants': 'grants:write',
  'DELETE /customers/{app_user_id}/grants/{id}': 'grants:write',
  // A write held for approval (docs/approvals.md): any change with audit:read; a key reads its own without it.
  'GET /changes/{id}': 'audit:read',
  // Reconciliation (issue #29; its own matrix with a real customer: test/reconciliation/refresh-customer.test.ts).
  'POST /customers/{app_user_id}/refresh': 'imports:write',
  'GET /reconciliations': 'imports:read',
  // The scheduled reconciliation's settings; its cross-tenant and schedule checks: test/reconciliation/schedule-settings.test.ts.
  'GET /reconciliation/settings': 'imports:read',
  'PATCH /reconciliation/settings': 'imports:write',
  // Exchange rates for charts (docs/charts.md; their own matrix with real rates: test/api/exchange-rates.test.ts).
  'GET /exchange-rates': 'charts:read',
  'POST /exchange-rates': 'charts:write',
  'DELETE /exchange-rates/{from}/{to}/{valid_from}': 'charts:write',
};
/** Bodies of the catalogue writes (upsert and a price already so: the matrix runs them twice). */
const WRITE_BODIES: Record<string, string> = {
  'products.create': JSON.stringify({ sku: 'scope_matrix', upsert: true }),
  'products.set_pricing': JSON.stringify({ prices: [{ country: 'US', currency: 'USD', amount: 999 }] }),
};
// Families with a scope matrix of their own (real ids and bodies): outbound webhooks, imports, customers (their
// page, grants and refresh), changes, exchange rates.
const OWN_MATRIX = /^\/(webhook-endpoints|outbound-|imports|customers\/|changes\/|exchange-rates)/;

describe('scope matrix', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let productId: string;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  beforeAll(async () => {
    // Sync operations run workflows: a worker of the file's own serves them.
    worker = await startTestWorker();
    api = await startApi({ config: worker.config });
    t = await newTenant('scopes');
    await seedDemoTenant(testDb(), t.tenant_id);
    productId = (await testDb()('products').where({ tenant_id: t.tenant_id }).first('id')).id;
  });
  afterAll(async () => {
    await api.close();
    await worker.stop();
  });

  it('the operation table demands exactly the spec’s scope for every endpoint it serves', () => {
    for (const op of restOps) {
      const key = `${op.rest!.method} ${op.rest!.path}`;
      expect([key, ENDPOINT_SCOPES[key]]).toEqual([key, op.scope]);
    }
    expect(new Set(restOps.map((o) => `${o.rest!.method} ${o.rest!.path}`)).size).toBe(restOps.length);
  });

  it('a key without the scope gets the same 403 whether the product it names exists or not', async () => {
    for (const [method, suffix, scope] of [
      ['GET', '', 'products:read'],
      ['POST', '/sync', 'products:sync'],
    ] as const) {
      const without = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== scope) as Scope[]);
      const answers = [];
      for (const named of [productId, crypto.randomUUID(), 'premium_monthly', 'no_such_sku']) {
        const r = await call(api.apiUrl, `/products/${named}${suffix}`, without.secret_key, { method });
        expect([named, r.status]).toEqual([named, 403]);
        answers.push(JSON.stringify(r.body));
      }
      expect(JSON.parse(answers[0])).toMatchObject({ error: 'insufficient_scope' });
      expect(new Set(answers).size, answers.join(' | ')).toBe(1);
    }
    await refill(t.tenant_id);
  });

  for (const op of restOps.filter((o) => !OWN_MATRIX.test(o.rest!.path))) {
    const path = op.rest!.path.replace('{id}', '__ID__').replace('{product_id}', '__ID__').replace('{name}', 'mrr');
    it(`${op.rest!.method} ${op.rest!.path}: only-its-scope → 200, every-other-scope → 403`, async () => {
      const p = path.replace('__ID__', productId);
      const only = await keyWith(t.tenant_id, [op.scope as Scope]);
      const allBut = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== op.scope) as Scope[]);
      for (const base of [api.apiUrl, api.altUrl]) {
        // POST /sync confirms the count the report shows now (the gate itself is tested in sync.test.ts).
        const body =
          op.name === 'sync.run'
            ? JSON.stringify({ confirm_count: (await call(base, '/sync', t.secret_key)).body.confirm_count })
            : (WRITE_BODIES[op.name] ?? undefined);
        const ok = await call(base, p, only.secret_key, { method: op.rest!.method, body });
        expect(ok.status).toBe(200);
        assertMatchesOpenApi(op.rest!.method, op.rest!.path, ok);
        const no = await call(base, p, allBut.secret_key, { method: op.rest!.method, body });
        expect(no.status).toBe(403);
        expect(no.body).toMatchObject({ error: 'insufficient_scope' });
        expect(no.body.detail).toContain(op.scope);
      }
      await refill(t.tenant_id);
    });
  }
});
