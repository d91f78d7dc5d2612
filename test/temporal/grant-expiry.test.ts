import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantWorkflowId } from '../../temporal/workflow-starts';
import { makeProduct } from '../helpers/factories';
import { testDb } from '../helpers/db';
import { call, keyWith, newTenant, startApi } from '../helpers/api';
import { startTestWorker } from '../helpers/temporal';
import { until } from '../helpers/until';
import { createEndpoint, outboundConfig } from '../outbound/fixtures';

/**
 * A grant ends by its own durable timer (workflows/grant-expiry.ts; docs/support.md): nobody
 * calls anything, the real Temporal server fires the timer at the grant's end and the grant is
 * expired, the SDK answer drops it and the outbound event says `source: grant`. The history shows
 * a timer woke the workflow. (The time-skipping test server is not installed here; the grant is
 * made to end seconds from now, as test/temporal/lifecycle-timers.test.ts does for grace periods.)
 */
describe('grant expiry (real Temporal server, real worker)', () => {
  let w: Awaited<ReturnType<typeof startTestWorker>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    w = await startTestWorker({ config: outboundConfig() });
    api = await startApi({ config: w.config, vault: w.vault });
  });
  afterAll(async () => {
    await api?.close();
    await w?.stop();
  });

  it('expires at its end by the workflow timer; the premium answer and the outbound events follow', async () => {
    const t = await newTenant('grant-timer');
    await makeProduct(t.tenant_id, { sku: 'gift_monthly' });
    await createEndpoint(api.apiUrl, t.secret_key, { url: 'http://127.0.0.1:1099/hook' });
    const key = (await keyWith(t.tenant_id, ['grants:write', 'customers:read'])).secret_key;
    const app = await testDb()('apps').where({ tenant_id: t.tenant_id }).first('publishable_key_test');
    const sdk = () => call(api.apiRoot, '/v1/sdk/subscribers/gifted', app.publishable_key_test);

    const end = new Date(Date.now() + 4000).toISOString();
    const g = await call(api.apiUrl, '/customers/gifted/grants', key, {
      method: 'POST',
      body: JSON.stringify({ sku: 'gift_monthly', expires_at: end, reason: 'beta tester' }),
    });
    expect(g.status).toBe(201);
    expect(g.body.expires_at).toBe(end);
    expect((await sdk()).body).toMatchObject({
      is_premium: true,
      entitlements: [expect.objectContaining({ source: 'grant', sku: 'gift_monthly', is_active: true })],
    });

    const row = () => testDb()('entitlement_grants').where({ id: g.body.id }).first();
    const expired = await until('expired by the timer', row, (r) => r?.state === 'expired', 20_000);
    expect(new Date(expired.ended_at).getTime()).toBeGreaterThanOrEqual(Date.parse(end));
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(end));
    const handle = w.client.workflow.getHandle(grantWorkflowId(t.tenant_id, g.body.id));
    expect(await handle.result()).toBe('expired');
    const { events } = await handle.fetchHistory();
    expect((events ?? []).filter((e) => e.timerFiredEventAttributes)).toHaveLength(1);

    expect((await sdk()).body).toMatchObject({ is_premium: false, entitlements: [] });
    const outbound = await testDb()('outbound_events')
      .where({ tenant_id: t.tenant_id })
      .whereIn('type', ['entitlement.active', 'entitlement.expired'])
      .orderBy('created_at');
    expect(outbound.map((e) => [e.type, e.body.data.source, e.body.data.grant_id])).toEqual([
      ['entitlement.active', 'grant', g.body.id],
      ['entitlement.expired', 'grant', g.body.id],
    ]);
    // Each event about the customer carries the next number and the whole snapshot (docs/outbound-webhooks.md).
    expect(outbound.map((e) => e.body.data.sequence)).toEqual([1, 2]);
    expect(outbound[0].body.data.entitlements).toEqual([
      expect.objectContaining({ source: 'grant', grant_id: g.body.id, sku: 'gift_monthly', state: 'active' }),
    ]);
    expect(outbound[1].body.data.entitlements).toEqual([]);
    const page = await call(api.apiUrl, '/customers/gifted', key);
    expect(page.body.entitlements[0]).toMatchObject({
      source: 'grant',
      state: 'expired',
      why: { rule: 'grant_expired' },
    });
    const kinds = page.body.timeline.data.map((x: any) => x.kind);
    expect(kinds.filter((k: string) => k !== 'outbound_delivery')).toEqual(['grant_expired', 'grant']);
    // One delivery per event to the endpoint: the grant's start and its end.
    expect(kinds.filter((k: string) => k === 'outbound_delivery')).toHaveLength(2);
  });

  it('a timer that fires for a grant already revoked leaves it revoked', async () => {
    const t = await newTenant('grant-timer-revoked');
    await makeProduct(t.tenant_id, { sku: 'gift_monthly' });
    const key = (await keyWith(t.tenant_id, ['grants:write'])).secret_key;
    const g = await call(api.apiUrl, '/customers/u1/grants', key, {
      method: 'POST',
      body: JSON.stringify({ sku: 'gift_monthly', expires_at: new Date(Date.now() + 3000).toISOString(), reason: 'r' }),
    });
    expect(g.status).toBe(201);
    // Revoked behind the operation's back (no signal reaches the timer): the timer still must not undo it.
    await testDb()('entitlement_grants')
      .where({ id: g.body.id })
      .update({ state: 'revoked', ended_at: new Date(), revoked_by: 'test' });
    const handle = w.client.workflow.getHandle(grantWorkflowId(t.tenant_id, g.body.id));
    expect(await handle.result()).toBe('already_ended');
    expect((await testDb()('entitlement_grants').where({ id: g.body.id }).first()).state).toBe('revoked');
  });
});
