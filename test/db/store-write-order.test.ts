import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { writeStoreRead } from '../../activities/store-purchases';
import { withTenant } from '../../db/tenant-tx';
import type { StorePurchaseRead } from '../../domain/store-purchase';
import type { CanonicalEventKind } from '../../domain/events';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';

/**
 * Two answers of the store about one purchase written out of order (a restore's read landing
 * between a refund notification's read and its write): the newer answer wins, except that a
 * verified revocation the older one carries is kept, since Play keeps no revoked state and the
 * newer read (EXPIRED) cannot say it. The real write (activities/store-purchases.ts
 * writeStoreRead) on the real tables, in both orders.
 */
describe('store answers written out of order', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, s)).toISOString();
  const readOf = (key: string, state: StorePurchaseRead['state'], readAt: string): StorePurchaseRead => ({
    provider: 'store_android',
    purchase_key: key,
    store_product_id: 'premium-monthly',
    store_app_user: null,
    is_sandbox: true,
    state,
    expires_at: at(-30),
    acknowledged: true,
    read_at: readAt,
  });
  const write = (tenantId: string, read: StorePurchaseRead, hint: CanonicalEventKind | null) =>
    withTenant(testDb(), tenantId, (trx) =>
      writeStoreRead(trx, { tenantId, provider: 'store_android', read, owner: 'holder', hint, eventIds: [] }),
    );
  const stateOf = async (tenantId: string, key: string) => {
    const sub = await testDb()('subscriptions').where({ tenant_id: tenantId, external_id: key }).first();
    const ents = await testDb()('entitlements').where({ subscription_id: sub.id }).select('app_user_id', 'state');
    return { status: sub.status as string, read_at: new Date(sub.store_read_at).toISOString(), ents };
  };

  it('the refund notification’s older read written after a newer EXPIRED read: revoked, the newer read’s time kept', async () => {
    const t = await makeTenant('store-write-order');
    const key = crypto.randomBytes(16).toString('hex');
    await write(t.tenant_id, readOf(key, 'active', at(0)), null);
    // The restore's read (newer, no notification) lands first; the refund's read (older) after it.
    expect((await write(t.tenant_id, readOf(key, 'expired', at(20)), null)).state).toBe('expired');
    const late = await write(t.tenant_id, readOf(key, 'expired', at(10)), 'refunded');
    expect(late).toMatchObject({ state: 'revoked', stale: false });
    expect(await stateOf(t.tenant_id, key)).toEqual({
      status: 'refunded',
      read_at: at(20),
      ents: [{ app_user_id: 'holder', state: 'revoked' }],
    });
  });

  it('in the other order the same: revoked, and the newer EXPIRED read keeps it revoked', async () => {
    const t = await makeTenant('store-write-order');
    const key = crypto.randomBytes(16).toString('hex');
    await write(t.tenant_id, readOf(key, 'active', at(0)), null);
    await write(t.tenant_id, readOf(key, 'expired', at(10)), 'refunded');
    await write(t.tenant_id, readOf(key, 'expired', at(20)), null);
    expect(await stateOf(t.tenant_id, key)).toEqual({
      status: 'refunded',
      read_at: at(20),
      ents: [{ app_user_id: 'holder', state: 'revoked' }],
    });
  });

  it('any other older answer changes nothing: an old ACTIVE read after a newer EXPIRED one, an old refund of a purchase still active', async () => {
    const t = await makeTenant('store-write-order');
    const key = crypto.randomBytes(16).toString('hex');
    await write(t.tenant_id, readOf(key, 'expired', at(20)), null);
    expect(await write(t.tenant_id, readOf(key, 'active', at(10)), null)).toMatchObject({ stale: true });
    expect((await stateOf(t.tenant_id, key)).ents).toEqual([{ app_user_id: 'holder', state: 'expired' }]);

    const renewed = crypto.randomBytes(16).toString('hex');
    await write(t.tenant_id, readOf(renewed, 'active', at(20)), null);
    // A refund read before the newer answer that says it is active again (a reversed refund): stale.
    expect(await write(t.tenant_id, readOf(renewed, 'expired', at(10)), 'refunded')).toMatchObject({ stale: true });
    expect((await stateOf(t.tenant_id, renewed)).ents).toEqual([{ app_user_id: 'holder', state: 'active' }]);
  });
});
