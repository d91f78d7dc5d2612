import { describe, expect, it } from 'vitest';
import { dropEntitlementsOfOthers, upsertEntitlement } from '../../db/entitlements';
import { insertGrant } from '../../db/grants';
import { readSubscriberRows } from '../../db/subscriptions';
import { readAsTenant } from '../../db/tenant-read';
import { withTenant } from '../../db/tenant-tx';
import { isPremium } from '../../domain/entitlement';
import { appDb } from '../helpers/db';
import { makeEntitlement, makeProduct, makeTenant } from '../helpers/factories';

/**
 * A grant is its own source (docs/support.md): the writes every store and provider path makes
 * (db/entitlements.ts: the shared upsert, the hand-over of a purchase to its registered owner)
 * never touch it. A store renewal and a store refund of the same product leave a live grant, and
 * the premium answer is the union of the two sources.
 */
describe('grants beside paid entitlements', () => {
  it('a store renewal and a store refund of the same product leave a live grant; the SDK answer is the union', async () => {
    const t = await makeTenant('grant-source');
    const product = await makeProduct(t.tenant_id, { sku: 'pro_yearly' });
    const paid = await makeEntitlement(t.tenant_id, {
      appUserId: 'u1',
      provider: 'store_android',
      productId: product.id,
      isSandbox: true,
    });
    const grant = await withTenant(appDb(), t.tenant_id, (trx) =>
      insertGrant(trx, {
        tenantId: t.tenant_id,
        appUserId: 'u1',
        productId: product.id,
        reason: 'support',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        grantedBy: 'user:test',
      }),
    );
    const answer = () =>
      readAsTenant(appDb(), t.tenant_id, (r) => readSubscriberRows(r, 'u1', 'test')).then((x) => x.ents);
    const write = (state: 'active' | 'revoked') =>
      withTenant(appDb(), t.tenant_id, async (trx) => {
        await upsertEntitlement(trx, {
          tenantId: t.tenant_id,
          appUserId: 'u1',
          provider: 'store_android',
          productId: product.id,
          subscriptionId: paid.subscription_id,
          state,
          isSandbox: true,
          expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
          graceUntil: null,
        });
        await dropEntitlementsOfOthers(trx, paid.subscription_id, 'u1');
      });

    await write('active'); // a renewal
    expect((await answer()).map((e) => [e.source, e.state]).sort()).toEqual([
      ['grant', 'active'],
      ['paid', 'active'],
    ]);
    await write('revoked'); // a refund
    const after = await answer();
    expect(after.map((e) => [e.source, e.state]).sort()).toEqual([
      ['grant', 'active'],
      ['paid', 'revoked'],
    ]);
    expect(isPremium(after as { state: string }[])).toBe(true);
    const row = await withTenant(appDb(), t.tenant_id, (trx) =>
      trx('entitlement_grants').where({ id: grant.id }).first(),
    );
    expect(row).toMatchObject({ state: 'active', ended_at: null });
    // The live key sees the grant too (a person's access is not a test-mode fact); not the sandbox purchase.
    const live = await readAsTenant(appDb(), t.tenant_id, (r) => readSubscriberRows(r, 'u1', 'live'));
    expect(live.ents.map((e) => e.source)).toEqual(['grant']);
  });
});
