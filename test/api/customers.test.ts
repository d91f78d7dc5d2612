import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellOnWebProvider } from '../helpers/connections';
import { startAllEmulators } from '../../emulators/registry';
import type { RunningEmulator } from '../../emulators/common/host';
import { PROVIDERS, type ProviderId } from '../../domain/providers';
import { SCOPES, type Scope } from '../../domain/scopes';
import { createAdapters } from '../../providers';
import { lifecycleWorkflowId, grantWorkflowId } from '../../temporal/workflow-starts';
import { testDb } from '../helpers/db';
import { assertMatchesOpenApi, call, keyWith, newTenant, refill, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { createEndpoint, outboundConfig } from '../outbound/fixtures';
import { confirmedPremium } from '../helpers/premium';

/**
 * The support desk over REST (docs/support.md): a real psp_a checkout through the emulator, the
 * customer page's entitlements and why, its timeline (the provider events, the status changes,
 * the outbound deliveries, grants), grants that a refund does not undo, revocation, scopes and
 * another tenant's 404. Every answer is checked against the OpenAPI document.
 */
describe('customers and grants over REST', () => {
  let emulators: Record<ProviderId, RunningEmulator>;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let pkTest: string;
  let pkLive: string;
  let reader: string;
  let granter: string;
  const user = 'support_user_1';
  const control = async (path: string, body: unknown) =>
    (
      await fetch(`${emulators.psp_a.url}/__control${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const target = () => `${api.dashboardRoot}/api/webhooks/psp_a`;
  const sdk = (u: string, pk = pkTest) => call(api.apiRoot, `/v1/sdk/subscribers/${u}`, pk);
  const customer = async (u: string, query = '', key = reader) => {
    const r = await call(api.apiUrl, `/customers/${encodeURIComponent(u)}${query}`, key);
    assertMatchesOpenApi('GET', '/customers/{app_user_id}', r);
    return r;
  };
  const grant = async (u: string, body: Record<string, unknown>, key = granter) => {
    const r = await call(api.apiUrl, `/customers/${encodeURIComponent(u)}/grants`, key, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    assertMatchesOpenApi('POST', '/customers/{app_user_id}/grants', r);
    return r;
  };
  const revoke = async (u: string, id: string, key = granter) => {
    const r = await call(api.apiUrl, `/customers/${encodeURIComponent(u)}/grants/${id}`, key, { method: 'DELETE' });
    assertMatchesOpenApi('DELETE', '/customers/{app_user_id}/grants/{id}', r);
    return r;
  };

  beforeAll(async () => {
    emulators = await startAllEmulators(
      { emulatorPorts: {} as never, dataDir: '' },
      { persistent: false, anyPort: true },
    );
    const providerBaseUrls = Object.fromEntries(PROVIDERS.map((p) => [p, emulators[p].url])) as Record<
      ProviderId,
      string
    >;
    worker = await startTestWorker({ config: { providerBaseUrls, ...outboundConfig() } });
    api = await startApi({ config: worker.config, vault: worker.vault, adapters: createAdapters(worker.config) });
    t = await newTenant('support');
    ({ account } = await sellOnWebProvider({
      emulatorUrl: emulators.psp_a.url,
      vault: worker.vault,
      apiUrl: api.apiUrl,
      tenant: t,
    }));
    const app = await testDb()('apps')
      .where({ tenant_id: t.tenant_id })
      .first('publishable_key_test', 'publishable_key_live');
    pkTest = app.publishable_key_test;
    pkLive = app.publishable_key_live;
    reader = (await keyWith(t.tenant_id, ['customers:read'])).secret_key;
    granter = (await keyWith(t.tenant_id, ['grants:write'])).secret_key;
    // An endpoint that wants every event: the outbound deliveries about the customer are on the timeline.
    await createEndpoint(api.apiUrl, t.secret_key, { url: 'http://127.0.0.1:1099/hook' });
    const checkout = await control('/checkout', {
      sku: 'pro_monthly',
      email: 'support-buyer@example.com',
      target: target(),
      account,
      mode: 'test',
      app_user_id: user,
    });
    expect(checkout.events.map((e: any) => e.status)).toEqual([200, 200, 200]);
    await until(
      'premium',
      () => sdk(user),
      (r) => confirmedPremium(r.body),
    );
    await until(
      'every event processed',
      async () =>
        testDb()('webhook_deliveries').where({ tenant_id: t.tenant_id, status: 'processed' }).count({ n: '*' }),
      (r) => Number(r[0].n) === 3,
    );
  });
  afterAll(async () => {
    await api?.close();
    await worker?.stop();
    await Promise.all(Object.values(emulators ?? {}).map((e) => e.close()));
  });

  it('the customer page: the paid entitlement with why (the rule, the subscription, the last event, the workflow)', async () => {
    const r = await customer(user);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'customer', app_user_id: user, is_premium: true });
    expect(r.body.entitlements).toHaveLength(1);
    const [e] = r.body.entitlements;
    expect(e).toMatchObject({
      source: 'paid',
      state: 'active',
      provider: 'psp_a',
      sku: 'pro_monthly',
      is_sandbox: true,
    });
    expect(e.why).toMatchObject({
      rule: 'renewing',
      state_by_rule: 'active',
      matches_stored_state: true,
      grant: null,
      subscription: { provider: 'psp_a', mode: 'test', status: 'active', sku: 'pro_monthly', store_purchase: null },
    });
    const sub = await testDb()('subscriptions').where({ tenant_id: t.tenant_id, app_user_id: user }).first();
    expect(e.why.subscription.provider_customer_id).toBe(sub.customer_external_id);
    expect(e.why.workflow_id).toBe(lifecycleWorkflowId(t.tenant_id, 'psp_a', sub.customer_external_id));
    expect(e.why.last_event).toMatchObject({ outcome: 'processed' });
    // The buyer's email is not part of the page.
    expect(JSON.stringify(r.body)).not.toContain('support-buyer@example.com');
  });

  it('the timeline: provider events, status changes, entitlement state and outbound deliveries, newest first, paged', async () => {
    const r = await customer(user);
    const kinds = r.body.timeline.data.map((x: any) => x.kind);
    expect(kinds.filter((k: string) => k === 'provider_event')).toHaveLength(3);
    expect(kinds).toContain('subscription_change');
    expect(kinds).toContain('entitlement_state');
    expect(kinds).toContain('outbound_delivery');
    const events = r.body.timeline.data.filter((x: any) => x.kind === 'provider_event');
    expect(events.map((x: any) => x.detail.event_type).sort()).toEqual([
      'customer.subscription.created',
      'invoice.payment_succeeded',
      'payment_intent.succeeded',
    ]);
    for (const x of events)
      expect(x).toMatchObject({ record: { type: 'webhook_delivery' }, detail: { outcome: 'processed' } });
    expect(events[0].workflow_id).toMatch(new RegExp(`^customer-${t.tenant_id}-psp_a-`));
    const ats = r.body.timeline.data.map((x: any) => x.at);
    expect([...ats].sort().reverse()).toEqual(ats);
    const total = r.body.timeline.pagination.total;
    expect(total).toBe(r.body.timeline.data.length);
    const first = await customer(user, '?limit=2');
    expect(first.body.timeline.pagination).toEqual({ limit: 2, offset: 0, total, has_more: true });
    const second = await customer(user, '?limit=2&offset=2');
    expect(second.body.timeline.data.map((x: any) => x.id)).toEqual(
      r.body.timeline.data.slice(2, 4).map((x: any) => x.id),
    );
    expect((await customer(user, '?offset=-1')).body).toMatchObject({ error: 'invalid_request', param: 'offset' });
  });

  it('scopes and tenants: customers:read only; an unknown app user and another tenant’s are 404', async () => {
    const narrow = (await keyWith(t.tenant_id, ['subscribers:read'])).secret_key;
    expect((await customer(user, '', narrow)).body.error).toBe('insufficient_scope');
    expect((await customer('nobody_here')).status).toBe(404);
    const other = await newTenant('support-other');
    const otherKey = (await keyWith(other.tenant_id, ['customers:read', 'grants:write'])).secret_key;
    const cross = await customer(user, '', otherKey);
    expect(cross.status).toBe(404);
    expect(cross.body.error).toBe('not_found');
    const crossGrant = await grant(user, { sku: 'pro_monthly', duration_days: 1, reason: 'x' }, otherKey);
    expect(crossGrant.status).toBe(404);
    // The grant scope is its own: a reader cannot grant.
    expect((await grant(user, { sku: 'pro_monthly', duration_days: 1, reason: 'x' }, reader)).body.error).toBe(
      'insufficient_scope',
    );
  });

  it('each operation takes exactly its scope: every other scope is refused 403 naming it, on both hosts', async () => {
    const g = await grant(user, { sku: 'pro_monthly', duration_days: 3, reason: 'scope matrix' });
    expect(g.status).toBe(201);
    const cases: [string, string, Scope, Record<string, unknown> | undefined, number][] = [
      ['GET', `/customers/${user}`, 'customers:read', undefined, 200],
      ['POST', `/customers/${user}/grants`, 'grants:write', { sku: 'pro_monthly', duration_days: 1, reason: 'm' }, 201],
      ['DELETE', `/customers/${user}/grants/${g.body.id}`, 'grants:write', undefined, 200],
    ];
    for (const [method, path, scope, body, status] of cases) {
      const allBut = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== scope) as Scope[]);
      const only = await keyWith(t.tenant_id, [scope]);
      for (const base of [api.apiUrl, api.altUrl]) {
        const init = { method, ...(body ? { body: JSON.stringify(body) } : {}) };
        const no = await call(base, path, allBut.secret_key, init);
        expect([path, no.status, no.body.error]).toEqual([path, 403, 'insufficient_scope']);
        expect(no.body.detail).toContain(scope);
        expect((await call(base, path, only.secret_key, init)).status).toBe(status);
      }
    }
    // The extra grants of this check are revoked: the rest of the file counts the user's access.
    for (const row of await testDb()('entitlement_grants').where({ tenant_id: t.tenant_id, state: 'active' }))
      expect((await revoke(user, row.id)).status).toBe(200);
    await refill(t.tenant_id);
  });

  it('bad grants are refused naming the field, and nothing is written', async () => {
    const before = await testDb()('entitlement_grants').where({ tenant_id: t.tenant_id }).count({ n: '*' });
    const cases: [Record<string, unknown>, string][] = [
      [{ sku: 'pro_monthly', duration_days: 5 }, 'reason'],
      [{ sku: 'pro_monthly', reason: 'r' }, 'duration_days'],
      [{ sku: 'pro_monthly', reason: 'r', duration_days: 0 }, 'duration_days'],
      [{ sku: 'pro_monthly', reason: 'r', duration_days: 1.5 }, 'duration_days'],
      [{ sku: 'pro_monthly', reason: 'r', duration_days: 2, expires_at: '2099-01-01T00:00:00Z' }, 'duration_days'],
      [{ sku: 'pro_monthly', reason: 'r', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [{ sku: 'pro_monthly', reason: 'r', expires_at: 'tomorrow' }, 'expires_at'],
      [{ reason: 'r', duration_days: 1 }, 'product_id'],
      [{ sku: 'pro_monthly', product_id: 'x', reason: 'r', duration_days: 1 }, 'sku'],
      [{ sku: 'pro_monthly', reason: 'r', duration_days: 1, extra: 1 }, 'extra'],
    ];
    for (const [body, param] of cases) {
      const r = await grant(user, body);
      expect([r.status, r.body.error, r.body.param], JSON.stringify(body)).toEqual([400, 'invalid_request', param]);
    }
    expect((await grant(user, { sku: 'no_such_sku', reason: 'r', duration_days: 1 })).status).toBe(404);
    expect(await testDb()('entitlement_grants').where({ tenant_id: t.tenant_id }).count({ n: '*' })).toEqual(before);
  });

  it('a grant is its own source: a refund revokes the paid access, the grant keeps the user premium; revoking ends it', async () => {
    await refill(t.tenant_id);
    const g = await grant(user, { sku: 'pro_monthly', duration_days: 30, reason: 'refund dispute, goodwill' });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ object: 'grant', app_user_id: user, state: 'active', sku: 'pro_monthly' });
    expect(g.body.workflow_id).toBe(grantWorkflowId(t.tenant_id, g.body.id));
    const keyId = (await testDb()('api_keys').where({ tenant_id: t.tenant_id }).orderBy('created_at', 'desc'))
      .map((k) => k.id)
      .find((id: string) => g.body.granted_by === id);
    expect(keyId).toBeDefined();
    // Its timer runs.
    const described = await worker.client.workflow.getHandle(g.body.workflow_id).describe();
    expect(described.status.name).toBe('RUNNING');

    // The store side changes: a refund. The paid entitlement is revoked; the grant stands.
    expect((await control('/events', { type: 'charge.refunded', target: target(), account })).status).toBe(200);
    const afterRefund = await until(
      'paid access revoked',
      () => customer(user),
      (r) => r.body.entitlements.some((e: any) => e.source === 'paid' && e.state === 'revoked'),
    );
    expect(afterRefund.body.is_premium).toBe(true);
    const granted = afterRefund.body.entitlements.find((e: any) => e.source === 'grant');
    expect(granted).toMatchObject({
      state: 'active',
      provider: null,
      sku: 'pro_monthly',
      why: { rule: 'grant_active' },
    });
    expect(granted.why.grant).toMatchObject({ reason: 'refund dispute, goodwill', granted_by: g.body.granted_by });
    const paid = afterRefund.body.entitlements.find((e: any) => e.source === 'paid');
    expect(paid.why).toMatchObject({ rule: 'refund', matches_stored_state: true });

    // The premium answer the SDK reads is the union, in both modes; the list counts the grant too.
    const s = await sdk(user);
    expect(s.body.is_premium).toBe(true);
    expect(s.body.entitlements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: 'grant', state: 'active', is_active: true, sku: 'pro_monthly' }),
        expect.objectContaining({ source: 'paid', state: 'revoked' }),
      ]),
    );
    expect((await sdk(user, pkLive)).body.is_premium).toBe(true);
    const list = await call(api.apiUrl, `/entitlements?app_user_id=${user}`, t.secret_key);
    assertMatchesOpenApi('GET', '/entitlements', list);
    expect(list.body.data.find((e: any) => e.id === g.body.id)).toMatchObject({ source: 'grant', state: 'active' });
    expect(list.body.data.find((e: any) => e.source === 'paid')).toMatchObject({ provider: 'psp_a', state: 'revoked' });

    // The outbound event says where the access came from.
    const events = await testDb()('outbound_events').where({ tenant_id: t.tenant_id, type: 'entitlement.active' });
    expect(events.find((e) => e.body.data.grant_id === g.body.id)?.body.data).toMatchObject({
      source: 'grant',
      app_user_id: user,
      provider: null,
      sku: 'pro_monthly',
    });
    expect(events.find((e) => e.body.data.provider === 'psp_a')?.body.data.source).toBe('paid');

    // The audit names who.
    const audit = await testDb()('audit_entries').where({
      tenant_id: t.tenant_id,
      action: 'grants.create',
      outcome: 'ok',
    });
    expect(audit.find((a) => a.detail?.id === g.body.id)).toMatchObject({
      actor_type: 'api_key',
      actor_id: g.body.granted_by,
    });

    // Revocation: the user is no longer premium (the paid access was refunded); a repeat changes nothing.
    const other = await newTenant('support-revoke-other');
    const otherKey = (await keyWith(other.tenant_id, ['grants:write'])).secret_key;
    expect((await revoke(user, g.body.id, otherKey)).status).toBe(404);
    expect((await revoke('someone_else', g.body.id)).status).toBe(404);
    expect((await revoke(user, 'not-a-uuid')).status).toBe(404);
    const r = await revoke(user, g.body.id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: 'revoked', revoked_by: g.body.granted_by });
    expect((await revoke(user, g.body.id)).body).toMatchObject({ state: 'revoked', ended_at: r.body.ended_at });
    expect((await sdk(user)).body.is_premium).toBe(false);
    await until(
      'the timer stopped',
      () => worker.client.workflow.getHandle(g.body.workflow_id).describe(),
      (d) => d.status.name === 'COMPLETED',
    );
    const page = await customer(user);
    const kinds = page.body.timeline.data.map((x: any) => x.kind);
    expect(kinds).toEqual(expect.arrayContaining(['grant', 'grant_revoked']));
    expect(page.body.timeline.data.find((x: any) => x.kind === 'grant').workflow_id).toBe(g.body.workflow_id);

    // Every event about the customer carries the next number and the whole snapshot: a receiver that sees them
    // shuffled and keeps the highest number holds what the customer page shows now.
    const about = await testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .whereRaw("body->'data'->>'sequence' is not null")
      .whereRaw("body->'data'->>'app_user_id' = ?", [user]);
    const seqs = about.map((e) => Number(e.body.data.sequence)).sort((a, b) => a - b);
    expect(seqs.length).toBeGreaterThan(4);
    expect(new Set(seqs).size).toBe(seqs.length);
    const shuffled = [...about].sort(() => Math.random() - 0.5);
    let kept: any = null;
    for (const e of shuffled) if (!kept || e.body.data.sequence > kept.sequence) kept = e.body.data;
    const now = page.body.entitlements.filter((e: any) => e.source === 'paid' || e.state === 'active');
    expect(kept.entitlements.map((e: any) => [e.source, e.state, e.sku]).sort()).toEqual(
      now.map((e: any) => [e.source, e.state, e.sku]).sort(),
    );
  });
});
