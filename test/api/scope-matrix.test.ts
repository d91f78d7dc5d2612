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
 * The spec's endpoint → scope table, complete. The one table kept by hand, on purpose: stated
 * here and reviewed by a person, never read from production code, so a wrong `scope` in an
 * operation's declaration cannot pass silently (the rest of this file is derived from the
 * declarations).
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
  'GET /audit.csv': 'audit:read',
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
  'GET /customers/{app_user_id}/events': 'customers:read',
  // Exports of the tenant's data (docs/exports.md).
  'POST /exports': 'exports:write',
  'GET /exports/{id}': 'exports:read',
  'GET /exports/{id}/files/{name}': 'exports:read',
  'GET /digests/{date}': 'exports:read',
  'GET /settings/exports': 'exports:read',
  'POST /customers/{app_user_id}/grants': 'grants:write',
  'DELETE /customers/{app_user_id}/grants/{id}': 'grants:write',
  'GET /customers/{app_user_id}/notes': 'customers:read',
  'POST /customers/{app_user_id}/notes': 'customers:write',
  'POST /customers/{app_user_id}/merge': 'customers:write',
  'POST /customers/{app_user_id}/erase': 'customers:erase',
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
  // Restores that move a purchase between app users (docs/transfers.md; their own matrix with real transfers:
  // test/sdk/transfers.test.ts).
  'GET /settings/transfers': 'transfers:read',
  'PATCH /settings/transfers': 'transfers:write',
  'GET /transfers': 'transfers:read',
  'GET /transfers/{id}': 'transfers:read',
  'POST /transfers/{id}/approve': 'transfers:write',
  'POST /transfers/{id}/reject': 'transfers:write',
  'POST /transfers/{id}/undo': 'transfers:write',
};
/** Bodies of the writes the loop runs (upsert and a price already so, nothing failed to replay: each runs twice). */
const WRITE_BODIES: Record<string, string> = {
  'products.create': JSON.stringify({ sku: 'scope_matrix', upsert: true }),
  'products.set_pricing': JSON.stringify({ prices: [{ country: 'US', currency: 'USD', amount: 999 }] }),
  'outbound_deliveries.replay_failed': JSON.stringify({ since: '2020-01-01T00:00:00Z' }),
  'customer_notes.create': JSON.stringify({ body: 'scope matrix' }),
  // Merged on the first run, already so on the next: 200 both times.
  'customers.merge': JSON.stringify({ from_app_user_id: 'scope_matrix_merged' }),
};
/**
 * The routes outside the generic loop below, each with why: it needs a real id of its own kind or a
 * body this tenant cannot give twice; its own matrix (named) runs it with those. Every other REST
 * operation is in the loop by itself.
 */
const OWN_MATRIX: Record<string, string> = {
  'POST /customers/{app_user_id}/erase': 'a known customer, and erasing is for good: test/api/customer-erasure.test.ts',
  'GET /webhook-endpoints/{id}': 'a real endpoint id: test/outbound/scopes.test.ts',
  'POST /webhook-endpoints': 'a reachable public URL the address guard admits: test/outbound/scopes.test.ts',
  'PATCH /webhook-endpoints/{id}': 'a real endpoint id: test/outbound/scopes.test.ts',
  'DELETE /webhook-endpoints/{id}': 'a real endpoint id, gone after one run: test/outbound/scopes.test.ts',
  'POST /webhook-endpoints/{id}/rotate-secret': 'a real endpoint id: test/outbound/scopes.test.ts',
  'POST /outbound-events/{id}/replay': 'a real event id: test/outbound/scopes.test.ts',
  'GET /outbound-deliveries/{id}/attempts': 'a real delivery id: test/outbound/scopes.test.ts',
  'POST /imports': 'a connected provider to read, one import at a time: test/imports/psp_a-import.test.ts',
  'GET /imports/{id}': 'a real import id: test/imports/psp_a-import.test.ts',
  'GET /customers/{app_user_id}': 'a real customer: test/api/customers.test.ts',
  'GET /customers/{app_user_id}/notes': 'a customer known by a note: test/api/customer-notes.test.ts',
  'GET /customers/{app_user_id}/events': 'a real customer with events: test/api/customer-events.test.ts',
  'POST /exports': 'one export at a time per tenant: test/api/exports.test.ts',
  'GET /exports/{id}': 'a real export: test/api/exports.test.ts',
  'GET /exports/{id}/files/{name}': 'a real export’s file: test/api/exports.test.ts',
  'POST /customers/{app_user_id}/grants': 'a real customer and product: test/api/customers.test.ts',
  'DELETE /customers/{app_user_id}/grants/{id}': 'a real grant, ended after one run: test/api/customers.test.ts',
  'POST /customers/{app_user_id}/refresh': 'a real customer: test/reconciliation/refresh-customer.test.ts',
  'GET /changes/{id}': 'a real held change, its own key: test/approvals/approvals.test.ts',
  'POST /exchange-rates': 'rates of its own, read back: test/api/exchange-rates.test.ts',
  'DELETE /exchange-rates/{from}/{to}/{valid_from}': 'a real rate, gone after one run: test/api/exchange-rates.test.ts',
  'GET /transfers/{id}': 'a real transfer: test/sdk/transfers.test.ts',
  'POST /transfers/{id}/approve': 'a real pending transfer, decided once: test/sdk/transfers.test.ts',
  'POST /transfers/{id}/reject': 'a real pending transfer, decided once: test/sdk/transfers.test.ts',
  'POST /transfers/{id}/undo': 'a real completed transfer, undone once: test/sdk/transfers.test.ts',
};
const routeOf = (o: (typeof restOps)[number]) => `${o.rest!.method} ${o.rest!.path}`;

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

  it('the declared routes are exactly the reviewed table’s, and each one is in the loop or says why not', () => {
    expect(restOps.map(routeOf).sort()).toEqual(Object.keys(ENDPOINT_SCOPES).sort());
    for (const route of Object.keys(OWN_MATRIX)) expect(restOps.map(routeOf)).toContain(route);
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

  for (const op of restOps.filter((o) => !Object.hasOwn(OWN_MATRIX, routeOf(o)))) {
    const path = op
      .rest!.path.replace('{id}', '__ID__')
      .replace('{product_id}', '__ID__')
      .replace('{name}', 'mrr')
      .replace('{date}', '2026-01-01');
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
        // 201 for a write declared to create, else 200.
        expect(ok.status).toBe(op.responses && '201' in op.responses ? 201 : 200);
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
