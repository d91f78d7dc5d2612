import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { connectDemoProviders, createEmulatorAccount } from '../../seed/demo-providers';
import { seedDemoTenant } from '../../seed/demo';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { generateMasterKey } from '../../vault/vault';
import { testDb } from '../helpers/db';
import { call, newTenant, refill } from '../helpers/api';

/**
 * The drift report and the confirm-count gate against the five emulators, a real worker and
 * the real Temporal server. Emulator state is read through /__control/state before and after
 * every refusal: a refused sync writes nothing anywhere.
 */
describe('drift report and sync gate', () => {
  const masterKey = generateMasterKey();
  const stack = useEmulatorStack(masterKey);

  const state = async () =>
    Object.fromEntries(
      await Promise.all(
        PROVIDERS.map(async (p) => [p, await (await fetch(`${stack.emulators[p].url}/__control/state`)).json()]),
      ),
    );
  const fault = (p: ProviderId, body: unknown) =>
    fetch(`${stack.emulators[p].url}/__control/faults`, {
      method: body ? 'POST' : 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
  const runRows = async (tenantId: string) => ({
    runs: Number((await testDb()('sync_runs').where({ tenant_id: tenantId }).count({ n: '*' }).first())!.n),
    events: Number((await testDb()('sync_events').where({ tenant_id: tenantId }).count({ n: '*' }).first())!.n),
  });

  /** A tenant connected to all five emulators with two priced products; the paywall is left unpublished. */
  async function connectedTenant(name: string) {
    const t = await newTenant(name);
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      for (const provider of PROVIDERS) {
        const acct = await createEmulatorAccount(stack.emulators[provider].url);
        await createConnection(trx, stack.worker.vault, {
          provider,
          account_ref: acct.account,
          credentials: acct.credentials,
          webhook_secret: acct.webhook_secret || null,
        });
      }
      for (const [sku, tier, monthly] of [
        ['pro_monthly', 'monthly', 999],
        ['pro_annual', 'annual', 8999],
      ] as const) {
        const [p] = await trx('products')
          .insert({
            tenant_id: t.tenant_id,
            sku,
            name: sku,
            tier,
            android_store_product_id: sku.replace('_', '-'),
            ios_store_product_id: `com.example.${sku}`,
          })
          .returning('id');
        const locales =
          sku === 'pro_annual'
            ? [['US', 'USD']]
            : [
                ['US', 'USD'],
                ['DE', 'EUR'],
              ];
        for (const [country, currency] of locales)
          await trx('prices').insert({
            tenant_id: t.tenant_id,
            product_id: p.id,
            country,
            currency,
            amount_minor: monthly,
          });
      }
      await trx('paywalls').insert({
        tenant_id: t.tenant_id,
        config: JSON.stringify({ skus: ['pro_monthly'] }),
        published_at: null,
      });
    });
    return t;
  }

  it('the report lists every divergence; a sync drains the automatable ones; a second run has nothing to do', async () => {
    const t = await connectedTenant('drain');
    const report = await call(stack.api.apiUrl, '/sync', t.secret_key);
    expect(report.status).toBe(200);
    expect(report.body.confirm_count).toBe(report.body.findings.length);
    const kinds = new Set(report.body.findings.map((f: any) => f.kind));
    for (const k of [
      'product-missing-at-provider',
      'active-provider-zero-links',
      'missing-currency-for-country',
      'paywall-not-published',
    ])
      expect(kinds).toContain(k);
    // 2 products × (3 web providers × 2 modes + 2 stores × 1 catalogue)
    expect(report.body.findings.filter((f: any) => f.kind === 'product-missing-at-provider')).toHaveLength(16);
    expect(report.body.findings.find((f: any) => f.kind === 'missing-currency-for-country')).toMatchObject({
      subject: 'product:pro_annual',
      automatable: false,
    });

    const run = await call(stack.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ ok: true, synced: 16, failed: [], skipped: [] });
    expect(run.body.priced_locales).toBeGreaterThan(0);
    expect(run.body.needs_human.map((f: any) => f.kind).sort()).toEqual([
      'missing-currency-for-country',
      'paywall-not-published',
    ]);
    // No link to the Temporal UI: it is the operator's, and shows every tenant's workflows.
    expect(run.headers.get('link')).toBeNull();
    // The run row records the workflow id it ran under (the dashboard shows it; operators look it up).
    expect((await testDb()('sync_runs').where({ id: run.body.run_id }).first()).workflow_id).toBe(
      `sync-${t.tenant_id}-${run.body.run_id}`,
    );

    const events = await call(stack.api.apiUrl, `/sync/events?run_id=${run.body.run_id}`, t.secret_key);
    expect(events.body.data.map((e: any) => e.provider).sort()).toEqual([...PROVIDERS].sort());
    expect(events.body.data.every((e: any) => e.status === 'succeeded')).toBe(true);

    const audit = await call(stack.api.apiUrl, '/audit?action=sync.run', t.secret_key);
    expect(audit.body.data[0]).toMatchObject({
      actor_type: 'api_key',
      outcome: 'ok',
      detail: { run_id: run.body.run_id },
    });

    const after = await call(stack.api.apiUrl, '/sync', t.secret_key);
    expect(after.body.findings.every((f: any) => !f.automatable)).toBe(true);
    expect(after.body.confirm_count).toBe(2);
    const products = await call(stack.api.apiUrl, '/products', t.secret_key);
    expect(products.body.data.every((p: any) => p.synced && Object.keys(p.provider_ids).length === 5)).toBe(true);

    const before = await state();
    await refill(t.tenant_id);
    const again = await call(stack.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: 2 }),
    });
    expect(again.status).toBe(200);
    expect(again.body.synced).toBe(0);
    expect(await state()).toEqual(before);
  });

  it('every run records one event per configured provider: a run with nothing to do says so for each', async () => {
    const t = await connectedTenant('noop');
    const drain = async () => {
      const n = (await call(stack.api.apiUrl, '/sync', t.secret_key)).body.confirm_count;
      return call(stack.api.apiUrl, '/sync', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ confirm_count: n }),
      });
    };
    expect((await drain()).body).toMatchObject({ ok: true, synced: 16 });
    await refill(t.tenant_id);
    const again = await drain();
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ ok: true, synced: 0, failed: [], skipped: [] });
    const events = await call(stack.api.apiUrl, `/sync/events?run_id=${again.body.run_id}`, t.secret_key);
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: any) => e.provider).sort()).toEqual([...PROVIDERS].sort());
    for (const e of events.body.data) {
      expect(e).toMatchObject({
        run_id: again.body.run_id,
        status: 'succeeded',
        reason: null,
        detail: { outcome: 'nothing_to_do', synced: 0, failed: 0 },
      });
    }
    const modes = Object.fromEntries(events.body.data.map((e: any) => [e.provider, [...e.detail.modes].sort()]));
    expect(modes).toEqual({
      psp_a: ['live', 'test'],
      psp_b: ['live', 'test'],
      psp_c: ['live', 'test'],
      store_android: ['live'],
      store_ios: ['live'],
    });
  });

  it('Prefer: respond-async keeps the refusals: a wrong count is 409 count_mismatch, and nothing is written', async () => {
    const t = await connectedTenant('async-gate');
    const n = (await call(stack.api.apiUrl, '/sync', t.secret_key)).body.confirm_count;
    const before = { emulators: await state(), rows: await runRows(t.tenant_id) };
    const r = await call(stack.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: n + 1 }),
      headers: { prefer: 'respond-async' },
    });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'count_mismatch', expected: n, received: n + 1, requiresConfirmation: true });
    const other = crypto.randomUUID();
    await testDb()('sync_runs').insert({ id: other, tenant_id: t.tenant_id, kind: 'sync', status: 'running' });
    const busy = await call(stack.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: n }),
      headers: { prefer: 'respond-async' },
    });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toBe('sync_in_progress');
    await testDb()('sync_runs').where({ id: other }).del();
    expect(await state()).toEqual(before.emulators);
    expect(await runRows(t.tenant_id)).toEqual(before.rows);
  });

  it('the demo tenant: findings of at least four kinds; a sync leaves only what needs a person', async () => {
    const t = await newTenant('demo-like');
    await seedDemoTenant(testDb(), t.tenant_id);
    expect(await connectDemoProviders(testDb(), { ...stack.worker.config, masterKey }, t.tenant_id)).toEqual([
      ...PROVIDERS,
    ]);
    const report = await call(stack.api.apiUrl, '/sync', t.secret_key);
    const kinds = new Set(report.body.findings.map((f: any) => f.kind));
    expect(kinds.size).toBeGreaterThanOrEqual(4);
    const run = await call(stack.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
    });
    expect(run.status).toBe(200);
    expect(run.body.failed).toEqual([]);
    const after = await call(stack.api.apiUrl, '/sync', t.secret_key);
    expect(after.body.findings.length).toBeGreaterThan(0);
    expect(after.body.findings.every((f: any) => !f.automatable)).toBe(true);
    expect(new Set(after.body.findings.map((f: any) => f.kind))).toEqual(
      new Set(['paywall-not-published', 'missing-currency-for-country']),
    );
    expect(after.body.findings).toEqual(run.body.needs_human);
  });

  it('the gate refuses a wrong, missing or malformed count, a forbidden field and a concurrent drain, writing nothing anywhere', async () => {
    const t = await connectedTenant('gate');
    const report = await call(stack.api.apiUrl, '/sync', t.secret_key);
    const n = report.body.confirm_count;
    const before = { emulators: await state(), rows: await runRows(t.tenant_id) };
    const post = (body: string) => call(stack.api.apiUrl, '/sync', t.secret_key, { method: 'POST', body });

    const wrong = await post(JSON.stringify({ confirm_count: n + 1 }));
    expect(wrong.status).toBe(409);
    expect(wrong.body).toMatchObject({
      error: 'count_mismatch',
      expected: n,
      received: n + 1,
      requiresConfirmation: true,
    });
    expect(wrong.body.detail).toContain(String(n));
    for (const body of ['{}', JSON.stringify({ confirm_count: null })]) {
      const r = await post(body);
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ error: 'count_mismatch', received: null, expected: n });
    }
    for (const body of [
      '[1]',
      '"x"',
      JSON.stringify({ confirm_count: '3' }),
      JSON.stringify({ confirm_count: -1 }),
      JSON.stringify({ confirm_count: 1.5 }),
      'not json',
    ]) {
      const r = await post(body);
      expect(r.status, body).toBe(400);
      expect(r.body.error).toBe('invalid_request');
    }
    const forbidden = await post(JSON.stringify({ confirm_count: n, api_key: 'x' }));
    expect(forbidden).toMatchObject({ status: 400, body: { error: 'forbidden_field' } });

    // Another process's drain holds the tenant's lock: the right count is still refused.
    const other = crypto.randomUUID();
    await testDb()('sync_runs').insert({ id: other, tenant_id: t.tenant_id, kind: 'sync', status: 'running' });
    const busy = await post(JSON.stringify({ confirm_count: n }));
    expect(busy.status).toBe(409);
    expect(busy.body.error).toBe('sync_in_progress');
    await testDb()('sync_runs').where({ id: other }).del();

    expect(await state()).toEqual(before.emulators);
    expect(await runRows(t.tenant_id)).toEqual(before.rows);
  });

  it('an unreachable provider makes both the report and the drain 503 drift_incomplete, naming it, and nothing is written', async () => {
    const t = await connectedTenant('down');
    const n = (await call(stack.api.apiUrl, '/sync', t.secret_key)).body.confirm_count;
    await fault('psp_b', { mode: 'down' });
    try {
      const before = { emulators: await state(), rows: await runRows(t.tenant_id) };
      const report = await call(stack.api.apiUrl, '/sync', t.secret_key);
      expect(report.status).toBe(503);
      expect(report.body.error).toBe('drift_incomplete');
      expect(report.body.detail).toContain('psp_b');
      const run = await call(stack.api.apiUrl, '/sync', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ confirm_count: n }),
      });
      expect(run.status).toBe(503);
      expect(run.body.error).toBe('drift_incomplete');
      expect(await state()).toEqual(before.emulators);
      expect(await runRows(t.tenant_id)).toEqual(before.rows);
    } finally {
      await fault('psp_b', null);
    }
  });

  it('Prefer: respond-async answers 202 with the run id at once; the run completes on its own', async () => {
    const t = await connectedTenant('async');
    const n = (await call(stack.api.apiUrl, '/sync', t.secret_key)).body.confirm_count;
    const r = await call(stack.api.apiUrl, '/sync', t.secret_key, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: n }),
      headers: { prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ run_id: expect.any(String), status: 'running' });
    expect(r.headers.get('link')).toBeNull();
    const result = await stack.worker.client.workflow.getHandle(`sync-${t.tenant_id}-${r.body.run_id}`).result();
    expect(result.synced).toBe(16);
    const row = await testDb()('sync_runs').where({ id: r.body.run_id }).first();
    expect(row.status).toBe('succeeded');
  });

  it('POST /products/{id}/sync: per-provider verdicts, one provider on request, 404 off-tenant, 400 for an unknown provider', async () => {
    const t = await connectedTenant('one');
    const other = await newTenant('one-other');
    const [p] = await testDb()('products').where({ tenant_id: t.tenant_id, sku: 'pro_monthly' }).select('id');
    const one = await call(stack.api.apiUrl, `/products/${p.id}/sync?provider=psp_a`, t.secret_key, { method: 'POST' });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ product_id: p.id, sku: 'pro_monthly', ok: true, synced: 2 });
    expect(one.body.verdicts.map((v: any) => `${v.provider}:${v.mode}`).sort()).toEqual(['psp_a:live', 'psp_a:test']);
    expect(one.headers.get('link')).toBeNull();

    await fault('psp_c', { mode: 'error', status: 400 });
    try {
      const all = await call(stack.api.apiUrl, `/products/${p.id}/sync`, t.secret_key, { method: 'POST' });
      expect(all.status).toBe(200);
      expect(all.body.ok).toBe(false);
      const failed = all.body.verdicts.filter((v: any) => !v.ok).map((v: any) => v.provider);
      expect(new Set(failed)).toEqual(new Set(['psp_c']));
      const events = await call(stack.api.apiUrl, `/sync/events?run_id=${all.body.run_id}&status=failed`, t.secret_key);
      expect(events.body.data).toHaveLength(1);
      expect(events.body.data[0].provider).toBe('psp_c');
    } finally {
      await fault('psp_c', null);
    }

    expect((await call(stack.api.apiUrl, `/products/${p.id}/sync`, other.secret_key, { method: 'POST' })).status).toBe(
      404,
    );
    const bad = await call(stack.api.apiUrl, `/products/${p.id}/sync?provider=nope`, t.secret_key, { method: 'POST' });
    expect(bad.status).toBe(400);
    expect(bad.body.param).toBe('provider');
  });
});
