import { describe, expect, it } from 'vitest';
import { upsertLifecycleSubscription, upsertStoreSubscription } from '../../db/subscriptions';
import { withTenant } from '../../db/tenant-tx';
import type { SubscriptionView } from '../../domain/subscription';
import { appDb, testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';

/**
 * The status and product histories are dated at the provider's time of the move (
 * docs/charts.md "A record's history"): the deciding event's time for the web lifecycle, the
 * store's answer for a store purchase; never later than the write, never before the record's
 * previous move; the write's time when none is said.
 */
describe('history rows dated at the provider time', () => {
  const view = (status: SubscriptionView['status'], since: string): SubscriptionView => ({
    external_id: 'sub_dating_1',
    customer_id: 'cus_dating_1',
    status,
    mode: 'live',
    email_event_id: null,
    app_user_id: 'dating-user',
    sku: null,
    trial_started_at: null,
    trial_ended_at: null,
    current_period_end: null,
    canceled_at: null,
    status_since: since,
    event_ids: [],
  });
  const history = async (tenantId: string) =>
    (
      await testDb()('subscription_changes')
        .where({ tenant_id: tenantId })
        .orderBy([{ column: 'changed_at' }, { column: 'id' }])
        .select('to_status', 'changed_at')
    ).map((r) => [r.to_status, new Date(r.changed_at).toISOString()]);

  it('web lifecycle: at the deciding event, bounded by now and by the previous move', async () => {
    const { tenant_id: t } = await makeTenant('history-dating');
    const write = (v: SubscriptionView) =>
      withTenant(appDb(), t, (trx) => upsertLifecycleSubscription(trx, t, 'psp_a', v));
    await write(view('trialing', '2026-01-05T10:00:00.000Z'));
    await write(view('active', '2026-01-19T10:00:00.000Z'));
    // A late event dated before the last move: the move is dated at the last move, not before it.
    await write(view('past_due', '2026-01-10T10:00:00.000Z'));
    const before = Date.now();
    // A provider clock ahead of ours: dated now.
    await write(view('canceled', '2099-01-01T00:00:00.000Z'));
    const rows = await history(t);
    expect(rows.slice(0, 3)).toEqual([
      ['trialing', '2026-01-05T10:00:00.000Z'],
      ['active', '2026-01-19T10:00:00.000Z'],
      ['past_due', '2026-01-19T10:00:00.000Z'],
    ]);
    expect(rows[3][0]).toBe('canceled');
    expect(Date.parse(rows[3][1])).toBeGreaterThanOrEqual(before - 5_000);
    expect(Date.parse(rows[3][1])).toBeLessThanOrEqual(Date.now() + 5_000);
    const [product] = await testDb()('subscription_product_changes').where({ tenant_id: t }).select('changed_at');
    expect(new Date(product.changed_at).toISOString()).toBe('2026-01-05T10:00:00.000Z');
  });

  it("store purchase: at the store's answer", async () => {
    const { tenant_id: t } = await makeTenant('history-dating-store');
    const write = (status: 'active' | 'expired', at: string) =>
      withTenant(appDb(), t, (trx) =>
        upsertStoreSubscription(trx, {
          tenantId: t,
          provider: 'store_ios',
          externalId: '2000000000099001',
          status,
          mode: 'live',
          appUserId: 'dating-store',
          productId: null,
          currentPeriodEnd: null,
          storeReadAt: at,
          country: status === 'active' ? 'GB' : null,
        }),
      );
    await write('active', '2026-02-01T08:00:00.000Z');
    await write('expired', '2026-03-01T08:00:00.000Z');
    expect(await history(t)).toEqual([
      ['active', '2026-02-01T08:00:00.000Z'],
      ['expired', '2026-03-01T08:00:00.000Z'],
    ]);
    // The country the store said stays when a later read says none.
    expect((await testDb()('subscriptions').where({ tenant_id: t }).first('country')).country).toBe('GB');
  });
});
