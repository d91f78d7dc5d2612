import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PREMIUM_STATES_SQL, upsertEntitlement } from '../../db/entitlements';
import { createTenant } from '../../db/tenants';
import { withTenant } from '../../db/tenant-tx';
import { ENTITLEMENT_STATES, isPremiumState, type EntitlementState } from '../../domain/entitlement';
import { testDb } from '../helpers/db';

/** Where SQL must say "is premium" (the shared entitlement row's guard), it says what the domain rule says. */
describe('"is premium" in SQL equals the domain rule', () => {
  it('the SQL list classifies every state as isPremiumState does', async () => {
    const { rows } = await testDb().raw(
      `select s as state, s in ${PREMIUM_STATES_SQL} as premium from unnest(?::text[]) as s`,
      [[...ENTITLEMENT_STATES]],
    );
    expect(rows).toEqual(ENTITLEMENT_STATES.map((state) => ({ state, premium: isPremiumState(state) })));
  });

  it("on seeded rows: another purchase replaces a user's entitlement exactly when the domain rule says the held one grants nothing or the new one grants access", async () => {
    const db = testDb();
    const t = await createTenant(db, { name: 'premium-sql' });
    const sub = async () =>
      (
        await db('subscriptions')
          .insert({
            tenant_id: t.tenant_id,
            provider: 'psp_a',
            mode: 'test',
            status: 'active',
            external_id: `sub_${crypto.randomUUID()}`,
          })
          .returning('id')
      )[0].id as string;
    const write = (appUserId: string, subscriptionId: string, state: EntitlementState) =>
      withTenant(db, t.tenant_id, (trx) =>
        upsertEntitlement(trx, {
          tenantId: t.tenant_id,
          appUserId,
          provider: 'psp_a',
          productId: null,
          subscriptionId,
          state,
          isSandbox: true,
          expiresAt: null,
          graceUntil: null,
        }),
      );
    for (const held of ENTITLEMENT_STATES) {
      for (const incoming of ENTITLEMENT_STATES) {
        const user = `u_${held}_${incoming}`;
        const [first, second] = [await sub(), await sub()];
        await write(user, first, held);
        const replaced = (await write(user, second, incoming)) !== null;
        const row = await db('entitlements')
          .where({ tenant_id: t.tenant_id, app_user_id: user })
          .first('subscription_id', 'state');
        const expected = !isPremiumState(held) || isPremiumState(incoming);
        expect({ held, incoming, replaced, row }).toEqual({
          held,
          incoming,
          replaced: expected,
          row: expected ? { subscription_id: second, state: incoming } : { subscription_id: first, state: held },
        });
      }
    }
  });
});
