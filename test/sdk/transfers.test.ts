import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../domain/roles';
import { transferWorkflowId } from '../../domain/transfers';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import { outboundEventBodies } from '../../operations/outbound-events/bodies';
import { registry } from '../../runtime/metrics';
import { approveTransfer } from '../../operations/transfers/approve';
import { rejectTransfer } from '../../operations/transfers/reject';
import { undoTransfer } from '../../operations/transfers/undo';
import { updateTransferSettings } from '../../operations/transfer-settings/update';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { call, keyWith, newTenant, refill } from '../helpers/api';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { playPurchases } from '../helpers/play-purchases';
import { until } from '../helpers/until';

/**
 * Restores that move a purchase between app users (docs/transfers.md), end to end: the real API,
 * worker, Postgres and the Play emulator. Each policy through POST /v1/sdk/store-purchases; the
 * transfer operations over REST with keys of each scope and as each role; the undo window's
 * timer on the dev server's clock with windows of 0 and a few seconds (docs/testing.md, "Durable
 * timers without waiting in real seconds"); what the outbound events say.
 */
describe('transfers', () => {
  let s: StoreStack;
  let writer: string;
  let reader: string;
  const { buy, register, notify: rtdn, processed } = playPurchases(() => s);
  const log = createLogger('silent');
  const premium = async (user: string) => (await s.subscriber(user)).body.is_premium as boolean;
  const api = (path: string, key: string, init: RequestInit = {}) => call(s.api.apiUrl, path, key, init);
  const settings = (body: Record<string, unknown>) =>
    api('/settings/transfers', writer, { method: 'PATCH', body: JSON.stringify(body) });
  const decide = (id: string, verb: string, key = writer) => api(`/transfers/${id}/${verb}`, key, { method: 'POST' });
  const events = (type: string) =>
    testDb()('outbound_events').where({ tenant_id: s.tenant.tenant_id, type }).orderBy('created_at').select('body');
  const member = async (tenantId: string, role: Role): Promise<UserActor> => {
    const [u] = await testDb()('dashboard_users')
      .insert({ tenant_id: tenantId, email: `${role}-${crypto.randomUUID()}@example.test`, role, password_hash: 'x' })
      .returning('id');
    return { kind: 'user', tenantId, userId: u.id, role };
  };
  const asPerson = (op: Operation, actor: UserActor, input: Record<string, unknown>) =>
    executeOperation(op, actor, input, {
      requestId: crypto.randomUUID(),
      services: s.api.services!,
      log,
      surface: 'dashboard',
    }).then(
      (r) => r as Record<string, any>,
      (e: { status?: number; code?: string }) => `${e.status} ${e.code}`,
    );
  /** Every row that gives an app user access, as stored (what an undo must put back exactly). */
  const accessRows = async (user: string) => ({
    entitlements: await testDb()('entitlements')
      .where({ tenant_id: s.tenant.tenant_id, app_user_id: user })
      .orderBy('id')
      .select('id', 'provider', 'product_id', 'subscription_id', 'state', 'is_sandbox', 'expires_at'),
    grants: await testDb()('entitlement_grants')
      .where({ tenant_id: s.tenant.tenant_id, app_user_id: user })
      .orderBy('id')
      .select('id', 'state', 'expires_at'),
    provisional: await testDb()('provisional_access')
      .where({ tenant_id: s.tenant.tenant_id, app_user_id: user })
      .orderBy('id')
      .select('id', 'state', 'expires_at'),
    claims: await testDb()('store_purchase_tokens')
      .where({ tenant_id: s.tenant.tenant_id, app_user_id: user })
      .orderBy('token_hash')
      .select('token_hash'),
    subscriptions: await testDb()('subscriptions')
      .where({ tenant_id: s.tenant.tenant_id, app_user_id: user })
      .orderBy('id')
      .select('id', 'status'),
  });

  let metricsBefore = '';
  beforeAll(async () => {
    metricsBefore = await registry.getSingleMetricAsString('billing_transfers_total');
    s = await startStoreStack('transfers');
    writer = (await keyWith(s.tenant.tenant_id, ['transfers:read', 'transfers:write', 'customers:read'])).secret_key;
    reader = (await keyWith(s.tenant.tenant_id, ['transfers:read'])).secret_key;
    // An endpoint, so the tenant's events are recorded; served by no worker, so nothing is sent.
    await testDb()('webhook_endpoints').insert({
      tenant_id: s.tenant.tenant_id,
      url: 'https://example.test/hook',
      secret_enc: 'v1:x',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
  });
  afterAll(async () => s?.close());

  it('settings: the defaults, a change, and bad values refused (400) with nothing written', async () => {
    const got = await api('/settings/transfers', reader);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ restore_behavior: 'keep_with_original', undo_hours: 72, updated_at: null });
    for (const bad of [{ undo_hours: 721 }, { undo_hours: -1 }, { restore_behavior: 'steal' }, { other: 1 }]) {
      const r = await settings(bad);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_request');
    }
    expect((await api('/settings/transfers', reader, { method: 'PATCH', body: '{}' })).status).toBe(403);
    const changed = await settings({ undo_hours: 24 });
    expect(changed.body).toMatchObject({ restore_behavior: 'keep_with_original', undo_hours: 24 });
    expect((await api('/settings/transfers', reader)).body.undo_hours).toBe(24);
  });

  it('keep_with_original: another app user restoring is refused 409 purchase_token_reused; the holder keeps it', async () => {
    await settings({ restore_behavior: 'keep_with_original' });
    const token = await buy('keep_a');
    expect((await register('keep_a', token)).status).toBe(200);
    const r = await register('keep_b', token);
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('purchase_token_reused');
    expect([await premium('keep_a'), await premium('keep_b')]).toEqual([true, false]);
    expect((await api('/transfers?app_user_id=keep_b', reader)).body.data).toEqual([]);
  });

  it('transfer: access moves at once; undo puts both sides back exactly, grants and displaced rows included', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 1 });
    const token = await buy('alice');
    expect((await register('alice', token)).body.is_premium).toBe(true);
    // Bob has a grant of his own and an old, expired entitlement for the same product: both must survive.
    const product = await testDb()('products').where({ tenant_id: s.tenant.tenant_id, sku: 'premium_monthly' }).first();
    await testDb()('entitlement_grants').insert({
      tenant_id: s.tenant.tenant_id,
      app_user_id: 'bob',
      product_id: product.id,
      reason: 'support',
      expires_at: new Date(Date.now() + 86_400_000),
      granted_by: 'user:test',
    });
    await testDb()('entitlements').insert({
      tenant_id: s.tenant.tenant_id,
      app_user_id: 'bob',
      provider: 'store_android',
      product_id: product.id,
      state: 'expired',
      is_sandbox: true,
      expires_at: new Date('2025-01-01T00:00:00Z'),
    });
    const aliceBefore = await accessRows('alice');
    const bobBefore = await accessRows('bob');

    const r = await register('bob', token);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ app_user_id: 'bob', is_premium: true });
    expect(r.body.entitlements.filter((e: any) => e.provider === 'store_android')).toEqual([
      expect.objectContaining({ state: 'active', is_active: true, sku: 'premium_monthly' }),
    ]);
    expect(await premium('alice')).toBe(false);
    const aliceMoved = await accessRows('alice');
    expect([aliceMoved.entitlements, aliceMoved.provisional, aliceMoved.claims, aliceMoved.subscriptions]).toEqual([
      [],
      [],
      [],
      [],
    ]);
    const list = await api('/transfers?app_user_id=bob', reader);
    expect(list.body.data).toHaveLength(1);
    const t = list.body.data[0];
    expect(t).toMatchObject({
      object: 'transfer',
      status: 'completed',
      from_app_user_id: 'alice',
      to_app_user_id: 'bob',
      provider: 'store_android',
      policy: 'transfer',
      is_sandbox: true,
    });
    expect(Date.parse(t.undo_until) - Date.parse(t.completed_at)).toBeGreaterThan(3_590_000);
    expect((await api(`/transfers/${t.id}`, reader)).body).toEqual(t);
    expect((await api('/transfers?app_user_id=alice', reader)).body.data.map((x: any) => x.id)).toEqual([t.id]);

    // The tenant's backend is told, with who held it before.
    const [completed] = (await events('transfer.completed')).map((e) => e.body);
    expect(completed.data).toMatchObject({
      transfer_id: t.id,
      status: 'completed',
      app_user_id: 'bob',
      previous_app_user_id: 'alice',
      from_app_user_id: 'alice',
      to_app_user_id: 'bob',
      provider: 'store_android',
      undo_until: t.undo_until,
    });
    expect(completed.data.entitlements.some((e: any) => e.source === 'paid' && e.state === 'active')).toBe(true);
    // Each body is what the OpenAPI document's webhooks section says it is.
    const shape = (type: string) => outboundEventBodies().find((b) => b.type === type)!.body;
    expect(shape('transfer.completed').safeParse(completed).success).toBe(true);

    // The support desk: both timelines show it; bob's why names the transfer.
    const bob = await api('/customers/bob', writer);
    const paid = bob.body.entitlements.find((e: any) => e.source === 'paid' && e.is_active);
    expect(paid.why.explanation).toContain('Premium since the transfer from alice');
    expect(paid.why.transfer).toMatchObject({ id: t.id, from_app_user_id: 'alice' });
    for (const who of ['alice', 'bob']) {
      const c = await api(`/customers/${who}`, writer);
      expect(c.status).toBe(200);
      const entry = c.body.timeline.data.find((e: any) => e.kind === 'transfer');
      expect(entry).toMatchObject({
        record: { type: 'transfer', id: t.id },
        workflow_id: transferWorkflowId(s.tenant.tenant_id, t.id),
        detail: { from_app_user_id: 'alice', to_app_user_id: 'bob', status: 'completed' },
      });
    }
    // The transfer's workflow holds the undo window.
    const wf = await s.worker.client.workflow.getHandle(transferWorkflowId(s.tenant.tenant_id, t.id)).describe();
    expect(wf.status.name).toBe('RUNNING');

    // A reader may not undo; a writer may.
    expect((await decide(t.id, 'undo', reader)).status).toBe(403);
    const undone = await decide(t.id, 'undo');
    expect(undone.status).toBe(200);
    expect(undone.body).toMatchObject({ id: t.id, status: 'undone' });
    expect(await accessRows('alice')).toEqual(aliceBefore);
    expect(await accessRows('bob')).toEqual(bobBefore);
    expect([await premium('alice'), await premium('bob')]).toEqual([true, true]); // bob: his own grant
    const [back] = (await events('transfer.undone')).map((e) => e.body);
    expect(back.data).toMatchObject({ transfer_id: t.id, app_user_id: 'alice', previous_app_user_id: 'bob' });
    expect(shape('transfer.undone').safeParse(back).success).toBe(true);
    expect((await decide(t.id, 'undo')).body.error).toBe('transfer_not_completed');
    await until(
      'the transfer workflow to end',
      () => s.worker.client.workflow.getHandle(transferWorkflowId(s.tenant.tenant_id, t.id)).describe(),
      (d) => d.status.name === 'COMPLETED',
    );
  });

  it('transfer then a renewal and a refund: the store writes go to whoever holds the purchase then', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 1 });
    const token = await buy('renew_a');
    await register('renew_a', token);
    expect((await register('renew_b', token)).body.is_premium).toBe(true);
    await processed((await rtdn('SUBSCRIPTION_RENEWED', token)).id);
    expect([await premium('renew_a'), await premium('renew_b')]).toEqual([false, true]);
    await s.control.store_android('POST', '/void', { purchase_token: token, account: s.accounts.store_android });
    await processed((await rtdn('VOIDED_PURCHASE', token)).id);
    const b = await s.subscriber('renew_b');
    expect(b.body.entitlements[0]).toMatchObject({ state: 'revoked' });
    expect(await testDb()('entitlements').where({ tenant_id: s.tenant.tenant_id, app_user_id: 'renew_a' })).toEqual([]);
  });

  it('review: 202 pending and the holder keeps access; support approves, a viewer may not; decided once', async () => {
    await settings({ restore_behavior: 'review', undo_hours: 1 });
    const token = await buy('erin');
    await register('erin', token);
    const r = await register('frank', token);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ transfer: { id: expect.any(String), status: 'pending' } });
    // The same restore again answers the same transfer; a third app user's is refused.
    expect((await register('frank', token)).body).toEqual(r.body);
    expect((await register('gus', token)).body.error).toBe('purchase_token_reused');
    expect([await premium('erin'), await premium('frank')]).toEqual([true, false]);
    const id = r.body.transfer.id;
    // Erin also holds provisional access for the purchase (a notification's, not yet confirmed): it moves and comes back too.
    const product = await testDb()('products').where({ tenant_id: s.tenant.tenant_id, sku: 'premium_monthly' }).first();
    const sub = await testDb()('subscriptions').where({ tenant_id: s.tenant.tenant_id, app_user_id: 'erin' }).first();
    await testDb()('provisional_access').insert({
      tenant_id: s.tenant.tenant_id,
      provider: 'store_android',
      kind: 'grant',
      customer_key: sub.external_id,
      app_user_id: 'erin',
      product_id: product.id,
      is_sandbox: true,
      event_at: new Date(),
      expires_at: new Date(Date.now() + 600_000),
    });
    const [erinBefore, frankBefore] = [await accessRows('erin'), await accessRows('frank')];
    expect((await api(`/transfers/${id}`, reader)).body).toMatchObject({
      status: 'pending',
      from_app_user_id: 'erin',
      to_app_user_id: 'frank',
      undo_until: null,
    });
    const [pending] = (await events('transfer.pending')).map((e) => e.body);
    expect(pending.data).toMatchObject({ transfer_id: id, app_user_id: 'frank', previous_app_user_id: 'erin' });
    expect(
      outboundEventBodies()
        .find((b) => b.type === 'transfer.pending')!
        .body.safeParse(pending).success,
    ).toBe(true);

    const viewer = await member(s.tenant.tenant_id, 'viewer');
    const support = await member(s.tenant.tenant_id, 'support');
    expect(await asPerson(approveTransfer as Operation, viewer, { id })).toBe('403 insufficient_scope');
    expect(await asPerson(rejectTransfer as Operation, viewer, { id })).toBe('403 insufficient_scope');
    expect(await asPerson(updateTransferSettings as Operation, viewer, { undo_hours: 1 })).toBe(
      '403 insufficient_scope',
    );
    const approved = await asPerson(approveTransfer as Operation, support, { id });
    expect(approved).toMatchObject({ id, status: 'completed', decided_at: expect.any(String) });
    expect([await premium('erin'), await premium('frank')]).toEqual([false, true]);
    expect((await accessRows('frank')).provisional).toEqual(erinBefore.provisional);
    expect(await asPerson(rejectTransfer as Operation, support, { id })).toBe('409 transfer_not_pending');
    expect((await decide(id, 'approve')).body.error).toBe('transfer_not_pending');
    const completed = (await events('transfer.completed')).map((e) => e.body.data);
    expect(completed.find((d) => d.transfer_id === id)).toMatchObject({ previous_app_user_id: 'erin' });
    // Support may undo too, within the window.
    expect(await asPerson(undoTransfer as Operation, support, { id })).toMatchObject({ status: 'undone' });
    expect([await premium('erin'), await premium('frank')]).toEqual([true, false]);
    expect([await accessRows('erin'), await accessRows('frank')]).toEqual([erinBefore, frankBefore]);
  });

  it('review, rejected: nothing moves; the audit names who decided', async () => {
    await settings({ restore_behavior: 'review' });
    const token = await buy('hana');
    await register('hana', token);
    const id = (await register('ivo', token)).body.transfer.id;
    const before = [await accessRows('hana'), await accessRows('ivo')];
    const rejected = await decide(id, 'reject');
    expect(rejected.body).toMatchObject({ id, status: 'rejected' });
    expect([await accessRows('hana'), await accessRows('ivo')]).toEqual(before);
    expect((await decide(id, 'undo')).body.error).toBe('transfer_not_completed');
    const audit = await testDb()('audit_entries')
      .where({ tenant_id: s.tenant.tenant_id, action: 'transfers.reject' })
      .select('outcome');
    expect(audit.map((a) => a.outcome)).toContain('ok');
    await until(
      'the rejected transfer workflow to end',
      () => s.worker.client.workflow.getHandle(transferWorkflowId(s.tenant.tenant_id, id)).describe(),
      (d) => d.status.name === 'COMPLETED',
    );
  });

  it('the undo window: 0 hours is already past (409); a window of seconds is closed by its timer, then 409', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 0 });
    const t1 = await buy('jo');
    await register('jo', t1);
    await register('kai', t1);
    const first = (await api('/transfers?app_user_id=kai', reader)).body.data[0];
    const late = await decide(first.id, 'undo');
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('transfer_undo_expired');
    expect(await premium('kai')).toBe(true);

    // 0.001 h = 3.6 s: open now, then the workflow's timer fires on the server's clock and closes it.
    await settings({ undo_hours: 0.001 });
    const t2 = await buy('lea');
    await register('lea', t2);
    await register('max', t2);
    const second = (await api('/transfers?app_user_id=max', reader)).body.data[0];
    const handle = s.worker.client.workflow.getHandle(transferWorkflowId(s.tenant.tenant_id, second.id));
    await until(
      'the window closed by the timer',
      () => testDb()('transfers').where({ id: second.id }).first('window_closed_at'),
      (row) => row?.window_closed_at != null,
      20_000,
    );
    const history = (await handle.fetchHistory()).events ?? [];
    expect(history.some((e) => e.timerFiredEventAttributes)).toBe(true);
    expect(await handle.result()).toBe('window_closed');
    expect((await decide(second.id, 'undo')).body.error).toBe('transfer_undo_expired');
    expect(await premium('max')).toBe(true);
  });

  it('scopes and tenants: no transfer scope is 403; another tenant sees and decides none of these (404)', async () => {
    await refill(s.tenant.tenant_id);
    const some = (await api('/transfers', reader)).body.data[0];
    expect(some).toBeDefined();
    const none = (await keyWith(s.tenant.tenant_id, ['customers:read'])).secret_key;
    expect((await api('/transfers', none)).status).toBe(403);
    expect((await api('/settings/transfers', none)).status).toBe(403);
    expect((await api(`/transfers/${some.id}`, none)).status).toBe(403);

    const other = await newTenant('transfers-other');
    const otherKey = (await keyWith(other.tenant_id, ['transfers:read', 'transfers:write'])).secret_key;
    expect((await api('/transfers', otherKey)).body.data).toEqual([]);
    expect((await api(`/transfers/${some.id}`, otherKey)).status).toBe(404);
    for (const verb of ['approve', 'reject', 'undo']) {
      const r = await decide(some.id, verb, otherKey);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('not_found');
    }
    expect((await api('/settings/transfers', otherKey)).body.restore_behavior).toBe('keep_with_original');
    expect((await api('/transfers/not-a-uuid', reader)).status).toBe(404);
  });

  it('the metric counts transfers by policy and outcome', async () => {
    const text = await registry.getSingleMetricAsString('billing_transfers_total');
    const read = (t: string, policy: string, outcome: string) =>
      Number(
        new RegExp(`billing_transfers_total\\{policy="${policy}",outcome="${outcome}"\\} (\\d+)`).exec(t)?.[1] ?? 0,
      );
    // What this file added: other files in the same worker count too (docs/testing.md).
    const count = (policy: string, outcome: string) =>
      read(text, policy, outcome) - read(metricsBefore, policy, outcome);
    expect(count('keep_with_original', 'refused')).toBeGreaterThanOrEqual(1);
    expect(count('transfer', 'completed')).toBeGreaterThanOrEqual(4);
    expect(count('review', 'pending')).toBeGreaterThanOrEqual(2);
    expect(count('review', 'completed')).toBe(1);
    expect(count('review', 'rejected')).toBe(1);
    expect(count('transfer', 'undone') + count('review', 'undone')).toBe(2);
  });
});
