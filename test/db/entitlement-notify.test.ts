import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Knex } from 'knex';
import { dropEntitlementsOfOthers, upsertEntitlement } from '../../db/entitlements';
import {
  listenForEntitlementChanges,
  sendCollected,
  subscriberHash,
  type EntitlementListener,
} from '../../db/entitlement-notify';
import { insertGrant } from '../../db/grants';
import { createKnex } from '../../db/knex';
import { readSubscriberRows } from '../../db/subscriptions';
import { readAsTenant } from '../../db/tenant-read';
import { withTenant } from '../../db/tenant-tx';
import { appDb } from '../helpers/db';
import { makeProduct, makeSubscription, makeTenant } from '../helpers/factories';
import { until } from '../helpers/until';

type Tenant = Awaited<ReturnType<typeof makeTenant>>;

/**
 * Where an entitlement write's notification is sent (db/entitlement-notify.ts): after its tenant
 * transaction commits, in a statement of its own outside any transaction (so no writing commit
 * holds Postgres's server-wide notify lock), never for a rollback. Real Postgres, a real LISTEN
 * session; the writer on a connection of its own, so every statement it sends is seen here.
 */
describe('entitlement notifications are sent after the commit', () => {
  let db: Knex;
  let listener: EntitlementListener;
  const sent: { sql: string; inTransaction: boolean }[] = [];
  /** Each notification received, with what a waiter woken by it reads at once. */
  const received: { tenantId: string; hash: string; read: Promise<{ state: string }[]> }[] = [];

  beforeAll(async () => {
    db = createKnex(inject('appDatabaseUrl'), { max: 2 });
    db.on('query', (q: { sql: string; __knexTxId?: string }) =>
      sent.push({ sql: q.sql, inTransaction: !!q.__knexTxId }),
    );
    listener = listenForEntitlementChanges(appDb(), {
      onChange: (tenantId, hash) =>
        received.push({
          tenantId,
          hash,
          // As a woken waiter does (api/sdk/entitlement-waits.ts): its own tenant read, right away.
          read: readAsTenant(appDb(), tenantId, (r) => readSubscriberRows(r, 'buyer', 'test')).then(
            (x) => x.ents as { state: string }[],
          ),
        }),
      onResync: () => undefined,
    });
    await listener.ready;
  });
  afterAll(async () => {
    await listener?.stop();
    await db?.destroy();
  });

  const of = (t: Tenant, user: string) => received.filter((n) => n.hash === subscriberHash(t.tenant_id, user));
  const arrived = (t: Tenant, user: string) =>
    until(
      `a notification for ${user}`,
      async () => of(t, user).length,
      (n) => n > 0,
    );
  const write = async (trx: Knex.Transaction, t: Tenant, user: string, subscriptionId: string) =>
    upsertEntitlement(trx, {
      tenantId: t.tenant_id,
      appUserId: user,
      provider: 'store_android',
      productId: null,
      subscriptionId,
      state: 'active',
      isSandbox: true,
      expiresAt: null,
      graceUntil: null,
    });

  it('a committed write is notified once, by a statement after its COMMIT, and the woken reader sees the row', async () => {
    const t = await makeTenant('notify-commit');
    const sub = await makeSubscription(t.tenant_id, { appUserId: 'buyer' });
    const product = await makeProduct(t.tenant_id, { sku: 'pro' });
    sent.length = 0;
    await withTenant(db, t.tenant_id, async (trx) => {
      await write(trx, t, 'buyer', sub.id);
      // Every other notifying write of the same app user in the transaction: one notification in all.
      await dropEntitlementsOfOthers(trx, sub.id, 'buyer');
      await insertGrant(trx, {
        tenantId: t.tenant_id,
        appUserId: 'buyer',
        productId: product.id,
        reason: 'support',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        grantedBy: 'user:test',
      });
    });
    const commit = sent.findIndex((q) => q.sql.startsWith('COMMIT'));
    const notify = sent.findIndex((q) => q.sql.includes('pg_notify'));
    expect(commit).toBeGreaterThan(0);
    expect(notify).toBe(commit + 1);
    expect(sent[notify].inTransaction).toBe(false);
    expect(sent.filter((q) => q.sql.includes('pg_notify'))).toHaveLength(1);

    await arrived(t, 'buyer');
    const [n] = of(t, 'buyer');
    expect(n.tenantId).toBe(t.tenant_id);
    expect((await n.read).map((e) => e.state)).toEqual(['active', 'active']);
  });

  it('a rolled-back write is never notified', async () => {
    const t = await makeTenant('notify-rollback');
    const sub = await makeSubscription(t.tenant_id, { appUserId: 'buyer' });
    const marker = await makeSubscription(t.tenant_id, { appUserId: 'marker' });
    sent.length = 0;
    await expect(
      withTenant(db, t.tenant_id, async (trx) => {
        await write(trx, t, 'buyer', sub.id);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(sent.some((q) => q.sql.includes('pg_notify'))).toBe(false);
    // A later committed write's notification arrives: had the rolled-back one been sent, it would have come first.
    await withTenant(db, t.tenant_id, (trx) => write(trx, t, 'marker', marker.id));
    await arrived(t, 'marker');
    expect(of(t, 'buyer')).toEqual([]);
  });

  it('a write in a savepoint (withTenant inside a transaction) notifies in the transaction: at its commit, not on rollback', async () => {
    const t = await makeTenant('notify-nested');
    const sub = await makeSubscription(t.tenant_id, { appUserId: 'buyer' });
    const dropped = await makeSubscription(t.tenant_id, { appUserId: 'dropped' });
    await expect(
      withTenant(db, t.tenant_id, async (outer) => {
        await withTenant(outer, t.tenant_id, (inner) => write(inner, t, 'dropped', dropped.id));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    sent.length = 0;
    await withTenant(db, t.tenant_id, (outer) =>
      withTenant(outer, t.tenant_id, (inner) => write(inner, t, 'buyer', sub.id)),
    );
    const notify = sent.findIndex((q) => q.sql.includes('pg_notify'));
    expect(notify).toBeGreaterThan(0);
    expect(notify).toBeLessThan(sent.findIndex((q) => q.sql.startsWith('COMMIT')));
    await arrived(t, 'buyer');
    expect((await of(t, 'buyer')[0].read).map((e) => e.state)).toEqual(['active']);
    expect(of(t, 'dropped')).toEqual([]);
  });
});

describe('a notification that cannot be sent', () => {
  it('does not fail its caller: the write it follows is committed (a held wait re-reads at its timeout)', async () => {
    const gone = createKnex(inject('appDatabaseUrl'), { max: 1 });
    await gone.destroy();
    await expect(sendCollected(gone, new Set(['t:h']))).resolves.toBeUndefined();
  });
});
