import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expireDueGrant, insertGrant, revokeGrant } from '../../db/grants';
import { withTenant } from '../../db/tenant-tx';
import { appDb, testDb } from '../helpers/db';
import { makeEntitlement, makeProduct, makeTenant } from '../helpers/factories';

/**
 * `token_invalidated` on `entitlement.*` events (docs/outbound-webhooks.md; docs/entitlement-tokens.md,
 * "Revocation"): true when a change took away or shortened access a token issued before it may
 * still state, so a tenant's backend knows to distrust that user's earlier tokens; false when
 * access was granted, and when it ended at its stated end (every token had expired with it).
 * Each change is the service's own write path or, for a paid entitlement's state, the update the
 * workflows make; the events are read as recorded for delivery.
 */
describe('outbound events say when an earlier entitlement token became wrong', () => {
  const hour = 3_600_000;
  const at = (ms: number) => new Date(Date.now() + ms).toISOString();

  /** The `entitlement.*` events recorded for one app user, oldest first, as [type, token_invalidated]. */
  const events = async (tenantId: string, appUserId: string) =>
    (
      await testDb()('outbound_events')
        .where({ tenant_id: tenantId })
        .whereRaw(`body->'data'->>'app_user_id' = ?`, [appUserId])
        .where('type', 'like', 'entitlement.%')
        .orderByRaw(`(body->'data'->>'sequence')::int`)
        .select('type', 'body')
    ).map((e) => [e.type, e.body.data.token_invalidated]);

  it('paid access: taken away or ended early is true; granted, or ended at its stated end, is false', async () => {
    const t = await makeTenant('token-invalidated');
    // An endpoint (fixture, as the owner), as a tenant listening for these would have.
    await testDb()('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://hooks.example/billing',
      secret_enc: 'v1:fixture',
      task_queue: 'fixture-queue',
    });
    const user = (tag: string) => `${tag}-${crypto.randomBytes(3).toString('hex')}`;
    const change = (id: string, fields: Record<string, unknown>) =>
      withTenant(appDb(), t.tenant_id, (trx) => trx('entitlements').where({ id }).update(fields));

    const refunded = user('refunded');
    const a = await makeEntitlement(t.tenant_id, { appUserId: refunded, expiresAt: at(24 * hour) });
    await change(a.id, { state: 'revoked' });

    const endedEarly = user('ended-early');
    const b = await makeEntitlement(t.tenant_id, { appUserId: endedEarly, expiresAt: at(24 * hour) });
    await change(b.id, { state: 'expired' });

    const graceRevoked = user('grace-revoked');
    const c = await makeEntitlement(t.tenant_id, {
      appUserId: graceRevoked,
      state: 'grace_period',
      expiresAt: at(-hour),
      graceUntil: at(hour),
    });
    await change(c.id, { state: 'revoked' });

    // Expired at its stated end: the end and the expiry in one transaction, so `now()` is the end.
    const onTime = user('on-time');
    await withTenant(appDb(), t.tenant_id, async (trx) => {
      const e = await makeEntitlement(t.tenant_id, { appUserId: onTime }, trx);
      const [{ now }] = (await trx.raw('select now() as now')).rows;
      await trx('entitlements').where({ id: e.id }).update({ expires_at: now });
      await trx('entitlements').where({ id: e.id }).update({ state: 'expired' });
    });

    expect({
      refunded: await events(t.tenant_id, refunded),
      endedEarly: await events(t.tenant_id, endedEarly),
      graceRevoked: await events(t.tenant_id, graceRevoked),
      onTime: await events(t.tenant_id, onTime),
    }).toEqual({
      refunded: [
        ['entitlement.active', false],
        ['entitlement.revoked', true],
      ],
      endedEarly: [
        ['entitlement.active', false],
        ['entitlement.expired', true],
      ],
      graceRevoked: [
        ['entitlement.grace_period', false],
        ['entitlement.revoked', true],
      ],
      onTime: [
        ['entitlement.active', false],
        ['entitlement.expired', false],
      ],
    });
  });

  it('granted access: a revoked grant, or one expired late, is true; the grant itself and its expiry at its end are false', async () => {
    const t = await makeTenant('token-invalidated-grants');
    await testDb()('webhook_endpoints').insert({
      tenant_id: t.tenant_id,
      url: 'https://hooks.example/billing',
      secret_enc: 'v1:fixture',
      task_queue: 'fixture-queue',
    });
    const product = await makeProduct(t.tenant_id);
    const grant = (appUserId: string, expiresAt: string) =>
      withTenant(appDb(), t.tenant_id, (trx) =>
        insertGrant(trx, {
          tenantId: t.tenant_id,
          appUserId,
          productId: product.id,
          reason: 'support goodwill',
          expiresAt,
          grantedBy: 'user:fixture',
        }),
      );
    const revoked = `grant-revoked-${crypto.randomBytes(3).toString('hex')}`;
    const g = await grant(revoked, at(24 * hour));
    await withTenant(appDb(), t.tenant_id, (trx) => revokeGrant(trx, t.tenant_id, revoked, g.id, 'user:fixture'));
    // Its end reached, the grant's timer expires it: the end and the expiry in one transaction, so `now()` is the end.
    const ended = `grant-ended-${crypto.randomBytes(3).toString('hex')}`;
    const expiry = await withTenant(appDb(), t.tenant_id, async (trx) => {
      const [{ now }] = (await trx.raw('select now() as now')).rows;
      const e = await insertGrant(trx, {
        tenantId: t.tenant_id,
        appUserId: ended,
        productId: product.id,
        reason: 'support goodwill',
        expiresAt: now.toISOString(),
        grantedBy: 'user:fixture',
      });
      return expireDueGrant(trx, t.tenant_id, e.id);
    });
    expect(expiry).toBe('expired');
    // Heard of late (its timer fired more than a second after the end): tokens issued in between vouched for it.
    const late = `grant-late-${crypto.randomBytes(3).toString('hex')}`;
    const l = await grant(late, at(-5000));
    expect(await withTenant(appDb(), t.tenant_id, (trx) => expireDueGrant(trx, t.tenant_id, l.id))).toBe('expired');
    expect({
      revoked: await events(t.tenant_id, revoked),
      ended: await events(t.tenant_id, ended),
      late: await events(t.tenant_id, late),
    }).toEqual({
      revoked: [
        ['entitlement.active', false],
        ['entitlement.revoked', true],
      ],
      ended: [
        ['entitlement.active', false],
        ['entitlement.expired', false],
      ],
      late: [
        ['entitlement.active', false],
        ['entitlement.expired', true],
      ],
    });
  });
});
