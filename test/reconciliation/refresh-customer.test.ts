import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProviderId } from '../../domain/providers';
import { SCOPES, type Scope } from '../../domain/scopes';
import type { RunningEmulator } from '../../emulators/common/host';
import { reconciliationRepairs } from '../../runtime/metrics';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { startTestWorker } from '../helpers/temporal';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { until } from '../helpers/until';
import { confirmedPremium } from '../helpers/premium';
import { closedPort } from '../helpers/closed-port';

describe('POST /v1/customers/{app_user_id}/refresh: a lost webhook repaired on demand, and listed', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  // The five emulators, a worker calling them and the listeners, closed after the file.
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  const user = 'rec_u1';
  let account: string;
  let lost: string;

  const sdk = async (u: string) => (await call(api.apiRoot, `/v1/sdk/subscribers/${u}`, t.publishable_key)).body;
  const refresh = (key: string, u: string) =>
    call(api.apiUrl, `/customers/${encodeURIComponent(u)}/refresh`, key, { method: 'POST', body: '{}' });
  const repairs = (key: string, query = '') => call(api.apiUrl, `/reconciliations${query}`, key);

  beforeAll(async () => {
    ({ emulators, worker, api } = stack);
    t = await newTenant('reconcile-refresh');
    ({ account } = await sellOnWebProvider({
      provider: 'psp_a',
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    }));
    // An endpoint that wants every event: the repair is told to it as subscription.reconciled.
    await testDb()('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://receiver.example.test/hook',
      secret_enc: 'v1:unused',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
    lost = `http://127.0.0.1:${await closedPort()}/api/webhooks/psp_a`;
    const c = await (
      await fetch(`${emulators.psp_a.url}/__control/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sku: 'pro_monthly',
          email: `${user}@example.com`,
          target: lost,
          account,
          mode: 'test',
          app_user_id: user,
        }),
      })
    ).json();
    // Every notification of the purchase went nowhere.
    expect(c.events.every((e: { status: number }) => e.status !== 200)).toBe(true);
  });

  it('not premium → refresh → premium; the answer and GET /v1/reconciliations say what differed and what was applied', async () => {
    expect((await sdk(user)).is_premium).toBe(false);
    const counted = async () =>
      (await reconciliationRepairs.get()).values.find((v) => v.labels.provider === 'psp_a')?.value ?? 0;
    const countedBefore = await counted();
    const r = await refresh(t.secret_key, user);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'customer_refresh',
      app_user_id: user,
      providers: ['psp_a'],
      compared: 1,
      repairs: [
        {
          provider: 'psp_a',
          held: null,
          provider_state: { status: 'active', current_period_end: expect.any(String), cancel_at: null },
          applied: [
            { id: expect.stringMatching(/^rec_start_/), kind: 'subscription_created' },
            { id: expect.stringMatching(/^rec_active_/), kind: 'renewed' },
          ],
        },
      ],
    });
    await until(
      `${user} premium`,
      () => sdk(user),
      (b) => confirmedPremium(b),
    );
    const listed = await repairs(t.secret_key, `?run_id=${r.body.run_id}&provider=psp_a`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual(r.body.repairs);
    // Told to the tenant's endpoints in the repair's own transaction, and counted.
    const told = await testDb()('outbound_events').where({ tenant_id: t.tenant_id, type: 'subscription.reconciled' });
    expect(told.map((e) => e.body.data)).toEqual([
      {
        reconciliation_id: r.body.repairs[0].id,
        run_id: r.body.run_id,
        provider: 'psp_a',
        external_id: r.body.repairs[0].subscription_id,
        app_user_id: user,
        held: null,
        provider_state: r.body.repairs[0].provider_state,
        applied: r.body.repairs[0].applied,
        // Like every event about a customer (docs/outbound-webhooks.md): its place in the customer's order and
        // chain (docs/event-proofs.md), and their entitlements as the repair found them (the lifecycle applies
        // the repair after it).
        sequence: expect.any(Number),
        prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        entitlements: expect.any(Array),
        // The customer's other ids (none here: docs/outbound-webhooks.md, "One customer, one chain").
        known_as: [],
        // Its hash covers the ids as their SHA-256, so an erasure keeps it (docs/event-proofs.md).
        proof: 2,
      },
    ]);
    expect(await counted()).toBe(countedBefore + 1);
    expect((await repairs(t.secret_key, '?provider=psp_b')).body.data).toEqual([]);
    // Nothing personal in what is recorded.
    expect(JSON.stringify(listed.body)).not.toContain('@example.com');
    // The customer's page tells the repair in its timeline, with the run that made it.
    const story = (await call(api.apiUrl, `/customers/${encodeURIComponent(user)}`, t.secret_key)).body.timeline.data;
    expect(story.filter((e: { kind: string }) => e.kind === 'reconciliation_repair')).toEqual([
      expect.objectContaining({
        record: { type: 'reconciliation', id: r.body.repairs[0].id },
        workflow_id: `refresh-${t.tenant_id}-${r.body.run_id}`,
        detail: expect.objectContaining({ provider: 'psp_a', run_id: r.body.run_id }),
      }),
    ]);
  });

  it('a second refresh finds nothing to repair and writes nothing', async () => {
    const before = await testDb()('reconciliations').where({ tenant_id: t.tenant_id }).count('* as n');
    const r = await refresh(t.secret_key, user);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ compared: 1, repairs: [] });
    expect(await testDb()('reconciliations').where({ tenant_id: t.tenant_id }).count('* as n')).toEqual(before);
    expect(
      await testDb()('outbound_events').where({ tenant_id: t.tenant_id, type: 'subscription.reconciled' }),
    ).toHaveLength(1);
    expect((await sdk(user)).is_premium).toBe(true);
  });

  it("another tenant's app user id is 404, as is one nobody knows; another tenant sees none of the repairs", async () => {
    const other = await newTenant('reconcile-other');
    expect((await refresh(other.secret_key, user)).body).toMatchObject({ error: 'not_found' });
    expect((await refresh(t.secret_key, 'nobody_here')).status).toBe(404);
    expect((await repairs(other.secret_key)).body.data).toEqual([]);
    expect((await repairs(t.secret_key)).body.data).toHaveLength(1);
  });

  it('a malformed run_id is a 400 with the field', async () => {
    const r = await repairs(t.secret_key, '?run_id=nope');
    expect([r.status, r.body.param]).toEqual([400, 'run_id']);
  });

  it('scopes: imports:write refreshes, imports:read lists; neither does the other', async () => {
    const reader = (await keyWith(t.tenant_id, ['imports:read'])).secret_key;
    const writer = (await keyWith(t.tenant_id, ['imports:write'])).secret_key;
    const others = (await keyWith(t.tenant_id, SCOPES.filter((s) => !s.startsWith('imports:')) as Scope[])).secret_key;
    expect((await repairs(reader)).status).toBe(200);
    expect((await refresh(reader, user)).body).toMatchObject({ error: 'insufficient_scope' });
    expect((await refresh(writer, user)).status).toBe(200);
    expect((await repairs(writer)).body).toMatchObject({ error: 'insufficient_scope' });
    expect((await repairs(others)).body).toMatchObject({ error: 'insufficient_scope' });
    expect((await refresh(others, user)).body).toMatchObject({ error: 'insufficient_scope' });
  });

  it('a cancellation never notified is repaired: held active, the provider says canceled', async () => {
    const sent = await fetch(`${emulators.psp_a.url}/__control/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'customer.subscription.deleted', target: lost, account }),
    });
    expect(sent.status).toBe(200);
    const r = await refresh(t.secret_key, user);
    expect(r.body).toMatchObject({
      compared: 1,
      repairs: [
        {
          held: { status: 'active' },
          provider_state: { status: 'canceled' },
          applied: [{ kind: 'subscription_created' }, { kind: 'subscription_canceled' }],
        },
      ],
    });
    await until(
      'the subscription held as canceled',
      () => testDb()('subscriptions').where({ tenant_id: t.tenant_id, app_user_id: user }).first('status'),
      (row) => row?.status === 'canceled',
    );
    expect((await refresh(t.secret_key, user)).body).toMatchObject({ compared: 1, repairs: [] });
  });
});
