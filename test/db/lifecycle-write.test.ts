import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLifecycleActivities } from '../../activities/lifecycle';
import type { ActivityDeps } from '../../activities/deps';
import type { SubscriptionView } from '../../domain/subscription';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';
import { countedConnection } from '../helpers/counted-connection';

/**
 * The workflow's write (activities/lifecycle.ts `writeLifecycle`) with several subscriptions in a
 * batch: each delivery ends `processed` and names the subscription its event was applied to (the
 * customer's timeline), the batch's deliveries being marked in the last subscription's upsert; an
 * event naming only the customer names none. Real Postgres, the worker's login role, the
 * statements counted on a connection of its own.
 */
describe('the lifecycle write marks its deliveries', () => {
  const { db: counted, sent } = countedConnection();

  const view = (external: string, eventIds: string[], user: string): SubscriptionView => ({
    external_id: external,
    customer_id: 'cus_1',
    status: 'active',
    mode: 'live',
    email_event_id: eventIds[0],
    app_user_id: user,
    sku: null,
    trial_started_at: null,
    trial_ended_at: null,
    current_period_end: null,
    canceled_at: null,
    status_since: new Date().toISOString(),
    event_ids: eventIds,
  });
  const active = { state: 'active' as const, expires_at: null, grace_until: null, next_change_at: null };

  it('each event names its own subscription, in two statements a subscription and no statement of its own', async () => {
    const t = await makeTenant('lifecycle-write');
    const ev = (n: string) => `evt_${n}_${crypto.randomUUID().slice(0, 8)}`;
    const [a1, a2, b1, intent, older] = ['a1', 'a2', 'b1', 'intent', 'older'].map(ev);
    // `older` belongs to subscription a but came in an earlier batch: already processed, not yet linked.
    await testDb()('webhook_deliveries').insert(
      [a1, a2, b1, intent, older].map((event_id) => ({
        tenant_id: t.tenant_id,
        provider: 'psp_a',
        event_id,
        event_type: 'x',
        payload: '{}',
        status: event_id === older ? 'processed' : 'received',
        buyer_email: event_id === b1 ? 'b@example.com' : null,
      })),
    );
    sent.length = 0;
    await createLifecycleActivities({ db: counted() } as ActivityDeps).writeLifecycle({
      tenantId: t.tenant_id,
      provider: 'psp_a',
      subscriptions: [view('sub_a', [a1, a2, older], 'user_a'), view('sub_b', [b1], 'user_b')],
      entitlements: [active, active],
      eventIds: [a1, a2, b1, intent],
    });
    const subs = await testDb()('subscriptions').where({ tenant_id: t.tenant_id }).select('id', 'external_id', 'email');
    const idOf = (external: string) => subs.find((s) => s.external_id === external)!.id;
    expect(subs.find((s) => s.external_id === 'sub_b')!.email).toBe('b@example.com');
    const rows = await testDb()('webhook_deliveries')
      .where({ tenant_id: t.tenant_id })
      .select('event_id', 'status', 'subscription_id', 'processed_at');
    const of = (e: string) => rows.find((r) => r.event_id === e)!;
    expect([a1, a2, b1, intent, older].map((e) => [of(e).status, of(e).subscription_id])).toEqual([
      ['processed', idOf('sub_a')],
      ['processed', idOf('sub_a')],
      ['processed', idOf('sub_b')],
      ['processed', null],
      ['processed', idOf('sub_a')],
    ]);
    expect(of(older).processed_at).toBeNull(); // it was not this batch's to process
    const statement = (q: string) => q.split('(')[0].trim().split(/\s+/).slice(0, 3).join(' ');
    expect(sent.map(statement)).toEqual([
      'BEGIN; select set_config',
      'insert into subscriptions',
      'with superseded as',
      // The last subscription's upsert marks the batch's deliveries.
      'with s as',
      'with superseded as',
      'COMMIT;',
      'select pg_notify',
    ]);
  });

  it('a batch that wrote no subscription still marks its deliveries, in a statement of its own', async () => {
    const t = await makeTenant('lifecycle-write-none');
    const intent = `evt_intent_${crypto.randomUUID().slice(0, 8)}`;
    await testDb()('webhook_deliveries').insert({
      tenant_id: t.tenant_id,
      provider: 'psp_a',
      event_id: intent,
      event_type: 'x',
      payload: '{}',
    });
    await createLifecycleActivities({ db: counted() } as ActivityDeps).writeLifecycle({
      tenantId: t.tenant_id,
      provider: 'psp_a',
      subscriptions: [],
      entitlements: [],
      eventIds: [intent],
    });
    expect(await testDb()('webhook_deliveries').where({ tenant_id: t.tenant_id }).first('status')).toEqual({
      status: 'processed',
    });
  });
});
