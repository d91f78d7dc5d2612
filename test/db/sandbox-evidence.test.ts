import { describe, expect, it } from 'vitest';
import { upsertEntitlement } from '../../db/entitlements';
import { withTenant } from '../../db/tenant-tx';
import { makeSubscription, makeTenant } from '../helpers/factories';
import { countedConnection } from '../helpers/counted-connection';

/**
 * A provider's first sandbox entitlement is a store's proof of test mode (readiness' sandbox
 * evidence): the entitlement write looks at readiness then, and only then (db/entitlements.ts).
 * Whether the provider had a sandbox row before is answered by the upsert itself; here, which
 * writes go on to readiness (its first statement, `outbound_wanted`) and how many statements each
 * write sends, on a connection of its own.
 */
describe('sandbox evidence noted by the entitlement write', () => {
  const { db: counted, sent } = countedConnection();

  it("only a provider's first sandbox row looks at readiness, in the upsert's own round trip otherwise", async () => {
    const t = await makeTenant('sandbox-evidence');
    const write = async (
      user: string,
      provider: string,
      isSandbox: boolean,
      state: 'active' | 'expired' = 'active',
    ) => {
      const sub = await makeSubscription(t.tenant_id, { appUserId: user, provider });
      sent.length = 0;
      await withTenant(counted(), t.tenant_id, (trx) =>
        upsertEntitlement(trx, {
          tenantId: t.tenant_id,
          appUserId: user,
          provider,
          productId: null,
          subscriptionId: sub.id,
          state,
          isSandbox,
          expiresAt: null,
          graceUntil: null,
        }),
      );
      // Between BEGIN and COMMIT: the upsert, then readiness' first statement when it looks (no endpoint wants the
      // event here, so its only one).
      return sent
        .slice(
          1,
          sent.findIndex((q) => q.startsWith('COMMIT')),
        )
        .map((q) => q.trim().split(/\s+/)[0]);
    };
    const upsertOnly = ['with'];
    const looked = ['with', 'select'];

    expect(await write('live', 'store_android', false)).toEqual(upsertOnly);
    expect(await write('first', 'store_android', true)).toEqual(looked);
    expect(await write('second', 'store_android', true)).toEqual(upsertOnly);
    // The same user's row written again (an update, not an insert): nothing new.
    expect(await write('first', 'store_android', true, 'expired')).toEqual(upsertOnly);
    // Another provider's first sandbox row is that provider's proof.
    expect(await write('first', 'store_ios', true)).toEqual(looked);
    expect(await write('third', 'store_ios', true)).toEqual(upsertOnly);
  });

  it('two sandbox rows of a provider written in one transaction: the first looks at readiness, the second not', async () => {
    const t = await makeTenant('sandbox-evidence-batch');
    const subs = [
      await makeSubscription(t.tenant_id, { appUserId: 'a', provider: 'store_android' }),
      await makeSubscription(t.tenant_id, { appUserId: 'b', provider: 'store_android' }),
    ];
    sent.length = 0;
    await withTenant(counted(), t.tenant_id, async (trx) => {
      for (const [i, user] of ['a', 'b'].entries())
        await upsertEntitlement(trx, {
          tenantId: t.tenant_id,
          appUserId: user,
          provider: 'store_android',
          productId: null,
          subscriptionId: subs[i].id,
          state: 'active',
          isSandbox: true,
          expiresAt: null,
          graceUntil: null,
        });
    });
    expect(sent.filter((q) => q.includes('outbound_wanted'))).toHaveLength(1);
  });
});
