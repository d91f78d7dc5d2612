import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { SCOPES } from '../domain/scopes';
import { withTenant } from '../db/tenant-tx';
import { insertApiKey } from '../db/api-keys';
import { createTenant } from '../db/tenants';
import {
  DEMO_COUPONS,
  DEMO_LOCALES,
  DEMO_PAYWALL,
  DEMO_PRODUCTS,
  DEMO_UNPRICED,
  demoAmount,
  demoSubscribers,
} from './demo-data';
import { connectDemoProviders } from './demo-providers';

export interface DemoTenant {
  tenant_id: string;
  secret_key: string;
  publishable_key: string;
}

/** The demo tenant: created and seeded once, then reused; each call mints a fresh all-scope key. */
export async function ensureDemoTenant(
  db: Knex,
  config: Config,
  opts: { mintKey?: boolean } = {},
): Promise<DemoTenant> {
  let tenant = await db('tenants').where({ is_demo: true }).first('id');
  if (!tenant) {
    try {
      const created = await createTenant(db, { name: 'Demo Co', isDemo: true });
      tenant = { id: created.tenant_id };
    } catch (err) {
      // Two starters raced; the unique index on is_demo let one win.
      tenant = await db('tenants').where({ is_demo: true }).first('id');
      if (!tenant) throw err;
    }
  }
  // Seeding is one transaction, so a demo tenant is either fully seeded or not at all; an
  // interrupted first start is completed by the next one.
  await seedDemoTenant(db, tenant.id);
  await connectDemoProviders(db, config, tenant.id);
  const key =
    opts.mintKey === false ? { secret_key: '' } : await insertApiKey(db, tenant.id, [...SCOPES], { name: 'demo' });
  const app = await db('apps').where({ tenant_id: tenant.id }).orderBy('created_at').first('publishable_key_test');
  return { tenant_id: tenant.id, secret_key: key.secret_key, publishable_key: app.publishable_key_test };
}

/** Seed a tenant's demo data unless it has a catalogue already. Safe to call concurrently. */
export async function seedDemoTenant(db: Knex, tenantId: string): Promise<void> {
  await withTenant(db, tenantId, async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`demo-seed:${tenantId}`]);
    if (await trx('products').first('id')) return;
    const productIds: Record<string, string> = {};
    for (const p of DEMO_PRODUCTS) {
      const [row] = await trx('products')
        .insert({
          ...p,
          tenant_id: tenantId,
          type: 'subscription',
          trial_per_platform: p.trial_per_platform ? JSON.stringify(p.trial_per_platform) : null,
        })
        .returning('id');
      productIds[p.sku] = row.id;
      await trx('prices').insert(
        DEMO_LOCALES.filter((l) => !(DEMO_UNPRICED[p.sku] ?? []).includes(l.country)).map((l) => ({
          tenant_id: tenantId,
          product_id: row.id,
          country: l.country,
          currency: l.currency,
          amount_minor: demoAmount(l, p.tier),
        })),
      );
    }
    for (const c of DEMO_COUPONS) {
      const { counterparts, ...coupon } = c;
      const [row] = await trx('coupons')
        .insert({ ...coupon, tenant_id: tenantId })
        .returning('id');
      await trx('coupon_counterparts').insert(
        counterparts.map((cp) => ({ ...cp, tenant_id: tenantId, coupon_id: row.id })),
      );
    }
    // Published yesterday, edited since: the drift report shows paywall-not-published.
    await trx('paywalls').insert({
      tenant_id: tenantId,
      config: JSON.stringify(DEMO_PAYWALL),
      published_at: trx.raw("now() - interval '1 day'"),
      updated_at: trx.fn.now(),
    });

    for (const s of demoSubscribers()) {
      const { ent, sku, ...sub } = s;
      const [row] = await trx('subscriptions')
        .insert({
          ...sub,
          tenant_id: tenantId,
          product_id: productIds[sku],
          customer_external_id: `cus_${s.app_user_id}`,
        })
        .returning('id');
      await trx('entitlements').insert({
        tenant_id: tenantId,
        app_user_id: s.app_user_id,
        provider: s.provider,
        product_id: productIds[sku],
        subscription_id: row.id,
        state: ent,
        is_sandbox: s.mode === 'test',
      });
    }

    const deliveries = [
      {
        provider: 'psp_a',
        event_id: 'evt_demo_1',
        event_type: 'payment_intent.succeeded',
        mode: 'live',
        status: 'processed',
      },
      {
        provider: 'psp_a',
        event_id: 'evt_demo_2',
        event_type: 'customer.subscription.created',
        mode: 'live',
        status: 'processed',
      },
      {
        provider: 'psp_a',
        event_id: 'evt_demo_3',
        event_type: 'invoice.payment_succeeded',
        mode: 'live',
        status: 'processed',
      },
      {
        provider: 'psp_b',
        event_id: 'evt_demo_carol_refund',
        event_type: 'adjustment.created',
        mode: 'live',
        status: 'processed',
      },
      {
        provider: 'psp_a',
        event_id: 'evt_demo_bad_sig',
        event_type: 'charge.refunded',
        mode: 'test',
        status: 'failed',
        reason: 'signature verification failed',
      },
    ];
    await trx('webhook_deliveries').insert(
      deliveries.map((d) => ({
        ...d,
        // Provider event ids are unique per provider across the whole service.
        event_id: `${d.event_id}_${tenantId.slice(0, 8)}`,
        tenant_id: tenantId,
        payload: JSON.stringify({
          id: d.event_id,
          type: d.event_type,
          data: { object: { customer: 'cus_[redacted]' } },
        }),
        processed_at: d.status === 'processed' ? trx.fn.now() : null,
      })),
    );
    await trx('audit_entries').insert([
      { tenant_id: tenantId, action: 'tenant.created', actor_type: 'system', outcome: 'ok' },
      {
        tenant_id: tenantId,
        action: 'products.seeded',
        actor_type: 'system',
        outcome: 'ok',
        detail: JSON.stringify({ count: DEMO_PRODUCTS.length }),
      },
    ]);
  });
}
