import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconciliationRepairs } from '../../runtime/metrics';
import { call, newTenant } from '../helpers/api';
import { testDb } from '../helpers/db';
import { historyText } from '../helpers/history';
import { startStoreStack, type StoreStack } from '../helpers/stores';
import { until } from '../helpers/until';
import { closedPort } from '../helpers/closed-port';

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/**
 * The stores in `POST /v1/customers/{app_user_id}/refresh`: a purchase registered by the SDK ends
 * at the store (Play revokes it, the App Store refunds it) while its notification goes nowhere;
 * the refresh re-reads it with the store's server API (the emulators) and repairs it, and a
 * second refresh finds nothing. A Play purchase registered before its token was kept is reported
 * skipped.
 */
describe('refresh re-reads the stores', () => {
  let s: StoreStack;
  let lost: string;
  let playToken: string;
  let iosTx: string;
  const playUser = 'play_rec_1';
  const iosUser = 'ios_rec_1';

  const refresh = (user: string, key = s.tenant.secret_key) =>
    call(s.api.apiUrl, `/customers/${encodeURIComponent(user)}/refresh`, key, { method: 'POST', body: '{}' });
  const premium = async (user: string) => (await s.subscriber(user)).body.is_premium as boolean;
  const counted = async (provider: string) =>
    (await reconciliationRepairs.get()).values.find((v) => v.labels.provider === provider)?.value ?? 0;

  beforeAll(async () => {
    s = await startStoreStack('refresh-stores');
    lost = `http://127.0.0.1:${await closedPort()}/api/webhooks`;
    // An endpoint that wants every event: each repair is told to it as subscription.reconciled.
    await testDb()('webhook_endpoints').insert({
      tenant_id: s.tenant.tenant_id,
      url: 'https://receiver.example.test/hook',
      secret_enc: 'v1:unused',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
    ({ purchase_token: playToken } = await s.control.store_android<{ purchase_token: string }>(
      'POST',
      '/sandbox-purchase',
      { product_id: 'premium_monthly', account: s.accounts.store_android, app_user_id: playUser },
    ));
    const registered = await s.register({
      app_user_id: playUser,
      provider: 'store_android',
      product_id: 'premium_monthly',
      purchase_token: playToken,
    });
    expect(registered.body.is_premium).toBe(true);
    const ios = await s.control.store_ios<{ transaction_id: string; signed_transaction: string }>(
      'POST',
      '/sandbox-purchase',
      { product_id: 'premium_monthly', account: s.accounts.store_ios, app_user_id: iosUser },
    );
    iosTx = ios.transaction_id;
    const iosRegistered = await s.register({
      app_user_id: iosUser,
      provider: 'store_ios',
      signed_transaction: ios.signed_transaction,
    });
    expect(iosRegistered.body.is_premium).toBe(true);
  });
  afterAll(async () => s?.close());

  it('the registration kept the Play token sealed by the vault, never in clear', async () => {
    const row = await testDb()('store_purchase_tokens')
      .where({ tenant_id: s.tenant.tenant_id, provider: 'store_android', token_hash: sha256(playToken) })
      .first();
    expect(row.purchase_token_enc).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain(playToken);
  });

  it('Play: revoked at the store, its RTDN lost → refresh → not premium, the repair recorded, told and counted', async () => {
    const sent = await s.control.store_android<{ status: number }>('POST', '/events', {
      type: 'SUBSCRIPTION_REVOKED',
      target: `${lost}/store_android`,
      account: s.accounts.store_android,
      data: { purchaseToken: playToken },
    });
    expect(sent.status).not.toBe(200);
    expect(await premium(playUser)).toBe(true);
    const before = await counted('store_android');

    const r = await refresh(playUser);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'customer_refresh',
      providers: ['store_android', 'store_ios'],
      compared: 1,
      skipped: [],
      repairs: [
        {
          object: 'reconciliation',
          provider: 'store_android',
          subscription_id: sha256(playToken),
          app_user_id: playUser,
          held: { status: 'active', current_period_end: expect.any(String) },
          provider_state: { status: 'expired', current_period_end: expect.any(String), cancel_at: null },
          applied: [{ id: expect.stringMatching(/^rec_expired_/), kind: 'expired' }],
        },
      ],
    });
    expect(await premium(playUser)).toBe(false);
    expect(await counted('store_android')).toBe(before + 1);
    const listed = await call(s.api.apiUrl, `/reconciliations?run_id=${r.body.run_id}`, s.tenant.secret_key);
    expect(listed.body.data).toEqual(r.body.repairs);
    const told = await testDb()('outbound_events').where({
      tenant_id: s.tenant.tenant_id,
      type: 'subscription.reconciled',
    });
    expect(told.map((e) => e.body.data.reconciliation_id)).toEqual([r.body.repairs[0].id]);

    // (c) The same store state read again: nothing differs, nothing is written.
    const again = await refresh(playUser);
    expect(again.body).toMatchObject({ compared: 1, repairs: [], skipped: [] });
    expect(await testDb()('reconciliations').where({ tenant_id: s.tenant.tenant_id })).toHaveLength(1);
  });

  it('App Store: refunded at the store, its notification lost → refresh → not premium; a second refresh writes nothing', async () => {
    const sent = await s.control.store_ios<{ status: number }>('POST', '/events', {
      type: 'REFUND',
      target: `${lost}/store_ios`,
      account: s.accounts.store_ios,
      data: { originalTransactionId: iosTx },
    });
    expect(sent.status).not.toBe(200);
    expect(await premium(iosUser)).toBe(true);
    const before = await counted('store_ios');
    const r = await refresh(iosUser);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      compared: 1,
      skipped: [],
      repairs: [
        {
          provider: 'store_ios',
          subscription_id: iosTx,
          held: { status: 'active' },
          provider_state: { status: 'refunded' },
          applied: [{ kind: 'refunded' }],
        },
      ],
    });
    expect(await premium(iosUser)).toBe(false);
    expect(await counted('store_ios')).toBe(before + 1);
    const rows = () => testDb()('reconciliations').where({ tenant_id: s.tenant.tenant_id, provider: 'store_ios' });
    expect(await rows()).toHaveLength(1);
    expect((await refresh(iosUser)).body).toMatchObject({ compared: 1, repairs: [] });
    expect(await rows()).toHaveLength(1);
  });

  it('another tenant can neither refresh the customer nor read their store purchases or repairs', async () => {
    const other = await newTenant('refresh-stores-other');
    for (const user of [playUser, iosUser]) {
      expect((await refresh(user, other.secret_key)).body).toMatchObject({ error: 'not_found' });
      expect((await call(s.api.apiUrl, `/customers/${user}`, other.secret_key)).status).toBe(404);
    }
    expect((await call(s.api.apiUrl, '/reconciliations', other.secret_key)).body.data).toEqual([]);
    expect((await call(s.api.apiUrl, '/subscribers', other.secret_key)).body.data).toEqual([]);
    // Its publishable key reads nothing of them either.
    const otherPk = (await testDb()('apps').where({ id: other.app_id }).first('publishable_key_test'))
      .publishable_key_test as string;
    expect((await s.subscriber(playUser, otherPk)).body.entitlements).toEqual([]);
  });

  it('a Play purchase claimed before tokens were kept is reported skipped, not an error; registering it again keeps it', async () => {
    const user = 'play_rec_old';
    const { purchase_token: token } = await s.control.store_android<{ purchase_token: string }>(
      'POST',
      '/sandbox-purchase',
      { product_id: 'premium_monthly', account: s.accounts.store_android, app_user_id: user },
    );
    const body = { app_user_id: user, provider: 'store_android', product_id: 'premium_monthly', purchase_token: token };
    expect((await s.register(body)).status).toBe(200);
    // As a registration made in earlier builds left it: the hash only.
    const claim = () =>
      testDb()('store_purchase_tokens').where({
        tenant_id: s.tenant.tenant_id,
        provider: 'store_android',
        token_hash: sha256(token),
      });
    await claim().update({ purchase_token_enc: null });
    const r = await refresh(user);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      compared: 0,
      repairs: [],
      skipped: [{ provider: 'store_android', subscription_id: sha256(token), reason: 'token_not_kept' }],
    });
    expect((await s.register(body)).status).toBe(200);
    expect((await claim().first()).purchase_token_enc).toMatch(/^v1:/);
    expect((await refresh(user)).body).toMatchObject({ compared: 1, repairs: [], skipped: [] });
  });

  it('the token is in no answer, repair, outbound event, audit row or workflow history', async () => {
    const answers = [
      await refresh(playUser),
      await call(s.api.apiUrl, '/reconciliations', s.tenant.secret_key),
      await call(s.api.apiUrl, `/customers/${playUser}`, s.tenant.secret_key),
      await call(s.api.apiUrl, '/subscribers', s.tenant.secret_key),
    ];
    for (const a of answers) expect(JSON.stringify(a.body)).not.toContain(playToken);
    for (const table of ['reconciliations', 'outbound_events', 'audit_entries', 'subscriptions']) {
      const rows = await testDb()(table).where({ tenant_id: s.tenant.tenant_id });
      expect(JSON.stringify(rows), table).not.toContain(playToken);
    }
    const runs = await until(
      'the refresh runs listed',
      async () => {
        const out: { workflowId: string; runId: string }[] = [];
        for await (const wf of s.worker.client.workflow.list({
          query: `BillingTenantId = '${s.tenant.tenant_id}'`,
        }))
          out.push(wf);
        return out;
      },
      (list) => list.filter((w) => w.workflowId.startsWith('refresh-')).length >= 6,
    );
    for (const wf of runs.filter((w) => w.workflowId.startsWith('refresh-') || w.workflowId.startsWith('store-'))) {
      const history = await s.worker.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      const text = await historyText(history, { codec: s.worker.codec, workflowId: wf.workflowId });
      expect(text).toContain(s.tenant.tenant_id);
      expect(text.includes(playToken), `purchase token in the history of ${wf.workflowId}`).toBe(false);
    }
  });
});
