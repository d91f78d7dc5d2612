import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { withTenant } from '../../db/tenant-tx';
import { dataConverterFor } from '../../temporal/payload-codec';
import { KIND_ATTR } from '../../workflows/search-attributes';
import { sellOnWebProvider } from '../helpers/connections';
import { call, newTenant, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';
import { createEndpoint, startOutboundStack } from '../outbound/fixtures';

/**
 * Histories the current code records replay on it without a determinism error: what a worker
 * restarted mid-run (a deploy, a crash) does with every open run. One tenant sells on psp_a: a
 * product sync, a drain with work at one provider and the others skipped, a checkout (its
 * customer workflow, waiting on its timer) and the outbound delivery it causes; every workflow
 * of the tenant is then replayed. No release has shipped, so no older history exists to replay;
 * docs/temporal.md ("Changing workflow code") says when histories of a release join these.
 */
describe('workflow histories recorded by the current code', () => {
  let s: Awaited<ReturnType<typeof startOutboundStack>>;
  beforeAll(async () => {
    s = await startOutboundStack();
  });
  afterAll(async () => s?.close());

  it('replay on it, every kind the tenant ran', async () => {
    const t = await newTenant('replay');
    const { account } = await sellOnWebProvider({
      emulatorUrl: s.emulators.psp_a.url,
      vault: s.worker.vault,
      apiUrl: s.api.apiUrl,
      tenant: t,
    });
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      const [p] = await trx('products')
        .insert({ tenant_id: t.tenant_id, sku: 'pro_annual', name: 'Pro annual', tier: 'annual' })
        .returning('id');
      await trx('prices').insert({
        tenant_id: t.tenant_id,
        product_id: p.id,
        country: 'US',
        currency: 'USD',
        amount_minor: 9999,
      });
    });
    const report = await call(s.api.apiUrl, '/sync', t.secret_key);
    const drain = await call(s.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
    });
    expect(drain.body).toMatchObject({ ok: true, failed: [] });
    expect(drain.body.synced).toBeGreaterThan(0);

    const ep = await createEndpoint(s.api.apiUrl, t.secret_key, { url: s.rx.url, event_types: ['entitlement.active'] });
    const target = `${s.api.dashboardRoot}/api/webhooks/psp_a`;
    const checkout = await (
      await fetch(`${s.emulators.psp_a.url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: 'r@example.com',
          target,
          account,
          mode: 'test',
          app_user_id: 'user_r',
        }),
      })
    ).json();
    expect(checkout.events.map((e: { status: number }) => e.status)).toEqual([200, 200, 200]);
    const deliveries = async () => (
      await refill(t.tenant_id),
      call(s.api.apiUrl, `/outbound-deliveries?endpoint_id=${ep.id}`, t.secret_key)
    );
    await until('the delivery posted', deliveries, (r) => r.body.data[0]?.status === 'succeeded', 30_000);

    // Visibility lags the runs by a moment: wait until it lists every kind this tenant started.
    const kinds = ['product-sync', 'sync', 'customer-lifecycle', 'outbound-webhook'];
    const query = `BillingTenantId = '${t.tenant_id}'`;
    await until(
      'every run listed',
      async () => {
        const seen = new Set<string>();
        for await (const wf of s.worker.client.workflow.list({ query }))
          seen.add(wf.typedSearchAttributes.get(KIND_ATTR) ?? '');
        return seen;
      },
      (seen) => kinds.every((k) => seen.has(k)),
    );
    const histories: HistoryAndWorkflowId[] = [];
    for await (const h of s.worker.client.workflow.list({ query }).intoHistories()) histories.push(h);

    const replayed: string[] = [];
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: dataConverterFor(s.worker.vault) },
      histories,
    )) {
      expect([r.workflowId, r.error]).toEqual([r.workflowId, undefined]);
      replayed.push(r.workflowId);
    }
    for (const prefix of ['product-sync-', 'sync-', 'customer-', 'outbound-'])
      expect(
        replayed.some((id) => id.startsWith(`${prefix}${t.tenant_id}-`)),
        prefix,
      ).toBe(true);
  }, 240_000);
});
