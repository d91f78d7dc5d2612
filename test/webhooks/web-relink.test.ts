import { beforeAll, describe, expect, it } from 'vitest';
import { transferWorkflowId } from '../../domain/transfers';
import { transfersCounter } from '../../runtime/metrics';
import { call, keyWith, newTenant, refill } from '../helpers/api';
import { sellOnWebProvider } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { until } from '../helpers/until';

/**
 * A web provider's subscription re-linked to another app user (the tenant's backend changed the
 * subscription's `metadata.app_user_id`, docs/transfers.md "Web purchases re-linked") follows the
 * tenant's restore policy, as a store restore does: the psp_a emulator, the real webhook path,
 * lifecycle workflow, transfer workflow and Postgres. Before, the record followed the new name and
 * the holder's entitlement stayed behind, premium and never updated again.
 */
describe('web purchases re-linked to another app user', () => {
  const stack = useEmulatorStack();
  let t: Awaited<ReturnType<typeof newTenant>>;
  let account: string;
  let writer: string;
  const target = () => `${stack.api.dashboardRoot}/api/webhooks/psp_a`;
  const control = async (path: string, body: Record<string, unknown>) => {
    const r = await fetch(`${stack.emulators.psp_a.url}/__control${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    return (await r.json()) as any;
  };
  const api = (path: string, init: RequestInit = {}) => call(stack.api.apiUrl, path, writer, init);
  const settings = (body: Record<string, unknown>) =>
    api('/settings/transfers', { method: 'PATCH', body: JSON.stringify(body) });
  const premium = async (user: string) => {
    await refill(t.tenant_id);
    const r = await call(stack.api.apiRoot, `/v1/sdk/subscribers/${user}`, t.publishable_key);
    return r.body.is_premium as boolean;
  };
  const processed = (eventId: string) =>
    until(
      `delivery ${eventId} processed`,
      () => testDb()('webhook_deliveries').where({ provider: 'psp_a', event_id: eventId }).first('status'),
      (d) => d?.status === 'processed',
    );
  /** A subscription bought by `user`, active for them: its ids at the provider. */
  const buy = async (user: string): Promise<{ subscription_id: string; customer_id: string }> => {
    const r = await control('/checkout', {
      sku: 'pro_monthly',
      email: `${user}@example.com`,
      target: target(),
      account,
      mode: 'test',
      app_user_id: user,
      trial_days: 0,
    });
    expect(r.events.map((e: { status: number }) => e.status)).toEqual([200, 200, 200]);
    await until(
      `${user}'s subscription active`,
      () => testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: user }).first('state'),
      (e) => e?.state === 'active',
    );
    return r;
  };
  /** The provider's next event about the object `id` names `user` (the tenant's backend re-linked the subscription). */
  let sentCount = 0;
  const relink = async (id: string, user: string, type = 'customer.subscription.updated') => {
    const sent = await control('/events', {
      // The lifecycle orders events by the provider's time (seconds), then by id: an id sorting after
      // the checkout's (and the previous re-link's) makes this one the latest within the same second.
      id: `evt_zzzzzzzz_${String(++sentCount).padStart(4, '0')}_${crypto.randomUUID()}`,
      type,
      target: target(),
      account,
      data: { id, metadata: { app_user_id: user } },
    });
    expect(sent.status).toBe(200);
    await processed(sent.id);
  };
  /** The customer's charge, read through the emulator's Stripe API as the tenant's connection would. */
  const chargeOf = async (customer: string) => {
    const acct = await control('/accounts', { account });
    const r = await fetch(`${stack.emulators.psp_a.url}/v1/charges?customer=${customer}`, {
      headers: { authorization: `Bearer ${acct.credentials.test.secret_key}` },
    });
    return ((await r.json()) as { data: { id: string }[] }).data[0].id;
  };
  /** `billing_transfers_total` for a policy and outcome (the worker runs in this process). */
  const counted = async (policy: string, outcome: string) =>
    (await transfersCounter.get()).values.find((v) => v.labels.policy === policy && v.labels.outcome === outcome)
      ?.value ?? 0;
  const transfersOf = async (user: string) => (await api(`/transfers?app_user_id=${user}`)).body.data as any[];
  const events = async (type: string) =>
    (
      await testDb()('outbound_events').where({ tenant_id: t.tenant_id, type }).orderBy('created_at').select('body')
    ).map((e) => e.body.data);

  beforeAll(async () => {
    t = await newTenant('web-relink');
    ({ account } = await sellOnWebProvider({
      emulatorUrl: stack.emulators.psp_a.url,
      vault: stack.worker.vault,
      apiUrl: stack.api.apiUrl,
      tenant: t,
    }));
    writer = (await keyWith(t.tenant_id, ['transfers:read', 'transfers:write'])).secret_key;
    // An endpoint, so the tenant's events are recorded; served by no worker, so nothing is sent.
    await testDb()('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://example.test/hook',
      secret_enc: 'v1:x',
      task_queue: `nobody-${crypto.randomUUID()}`,
    });
  });

  it('keep_with_original (the default): the holder keeps it; the new name gets nothing and no transfer; the refusal counted once', async () => {
    const refusedBefore = await counted('keep_with_original', 'refused');
    const { subscription_id: sub } = await buy('wk_a');
    await relink(sub, 'wk_b');
    expect([await premium('wk_a'), await premium('wk_b')]).toEqual([true, false]);
    const record = await testDb()('subscriptions').where({ tenant_id: t.tenant_id, external_id: sub }).first();
    expect(record.app_user_id).toBe('wk_a');
    expect(await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: 'wk_b' })).toEqual([]);
    expect(await transfersOf('wk_b')).toEqual([]);
    // The provider repeats the name on its later events (a renewal, a re-sent event): one refusal, counted once.
    await relink(sub, 'wk_b');
    await relink(sub, 'wk_b');
    // Counted just after each event's write commits: by the third event's, the first two were counted.
    await until(
      'the refusal counted',
      () => counted('keep_with_original', 'refused'),
      (n) => n > refusedBefore,
    );
    expect((await counted('keep_with_original', 'refused')) - refusedBefore).toBe(1);
    expect(
      await testDb()('transfer_refusals')
        .where({ tenant_id: t.tenant_id })
        .select('from_app_user_id', 'to_app_user_id'),
    ).toEqual([{ from_app_user_id: 'wk_a', to_app_user_id: 'wk_b' }]);
    // Naming yet another app user is another decision: counted again.
    await relink(sub, 'wk_c');
    await until(
      'the second refusal counted',
      () => counted('keep_with_original', 'refused'),
      (n) => n > refusedBefore + 1,
    );
    expect([await premium('wk_a'), await premium('wk_c')]).toEqual([true, false]);
  });

  it('transfer: access moves with the subscription; undo brings it back, and the provider naming the receiver again does not undo that', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 1 });
    const { subscription_id: sub } = await buy('wt_a');
    await relink(sub, 'wt_b');
    expect([await premium('wt_a'), await premium('wt_b')]).toEqual([false, true]);
    const [tr] = await transfersOf('wt_b');
    expect(tr).toMatchObject({
      status: 'completed',
      provider: 'psp_a',
      policy: 'transfer',
      from_app_user_id: 'wt_a',
      to_app_user_id: 'wt_b',
      is_sandbox: true,
    });
    expect((await events('transfer.completed')).find((d) => d.transfer_id === tr.id)).toMatchObject({
      app_user_id: 'wt_b',
      previous_app_user_id: 'wt_a',
      provider: 'psp_a',
    });
    const wf = stack.worker.client.workflow.getHandle(transferWorkflowId(t.tenant_id, tr.id));
    // The lifecycle starts the transfer's workflow just after its write made the transfer.
    await expect
      .poll(
        () =>
          wf.describe().then(
            (d) => d.status.name,
            () => 'not started',
          ),
        { timeout: 30_000, interval: 100 },
      )
      .toBe('RUNNING');
    // A later event naming the receiver changes nothing about who holds it.
    await relink(sub, 'wt_b');
    expect([await premium('wt_a'), await premium('wt_b')]).toEqual([false, true]);

    const undone = await api(`/transfers/${tr.id}/undo`, { method: 'POST' });
    expect(undone.body).toMatchObject({ status: 'undone' });
    expect([await premium('wt_a'), await premium('wt_b')]).toEqual([true, false]);
    // The provider keeps naming the receiver: the undo stands, nothing is transferred again (and
    // nothing refused: the move was decided against, counted as undone).
    const refused = await counted('transfer', 'refused');
    await relink(sub, 'wt_b');
    await relink(sub, 'wt_b');
    expect(await counted('transfer', 'refused')).toBe(refused);
    expect([await premium('wt_a'), await premium('wt_b')]).toEqual([true, false]);
    expect((await transfersOf('wt_b')).map((x) => x.status)).toEqual(['undone']);
  });

  it('transfer, then a refund: it revokes whoever holds the subscription then', async () => {
    await settings({ restore_behavior: 'transfer', undo_hours: 1 });
    const bought = await buy('wr_a');
    await relink(bought.subscription_id, 'wr_b');
    expect(await premium('wr_b')).toBe(true);
    await relink(await chargeOf(bought.customer_id), 'wr_b', 'charge.refunded');
    const ents = await until(
      'the receiver revoked',
      () => testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: 'wr_b' }).select('state'),
      (rows) => rows[0]?.state === 'revoked',
    );
    expect(ents).toHaveLength(1);
    expect(await testDb()('entitlements').where({ tenant_id: t.tenant_id, app_user_id: 'wr_a' })).toEqual([]);
  });

  it('review: the holder keeps it until approved; the provider asks once; approval moves it', async () => {
    await settings({ restore_behavior: 'review' });
    const { subscription_id: sub } = await buy('wv_a');
    await relink(sub, 'wv_b');
    await relink(sub, 'wv_b');
    expect([await premium('wv_a'), await premium('wv_b')]).toEqual([true, false]);
    const pending = await transfersOf('wv_b');
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ status: 'pending', policy: 'review', provider: 'psp_a' });
    expect((await events('transfer.pending')).find((d) => d.transfer_id === pending[0].id)).toMatchObject({
      app_user_id: 'wv_b',
      previous_app_user_id: 'wv_a',
    });
    const approved = await api(`/transfers/${pending[0].id}/approve`, { method: 'POST' });
    expect(approved.body).toMatchObject({ status: 'completed' });
    expect([await premium('wv_a'), await premium('wv_b')]).toEqual([false, true]);
    // The next event names the receiver, who now holds it: no new transfer.
    await relink(sub, 'wv_b');
    expect((await transfersOf('wv_b')).map((x) => x.status)).toEqual(['completed']);
    expect(await premium('wv_b')).toBe(true);
  });
});
