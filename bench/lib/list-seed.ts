import type { BenchDatabase } from './db';

/**
 * 50 rows per tenant in every listed table the base seed (bench/lib/db.ts) leaves empty
 * (subscriptions, coupons with counterparts, audit entries, inbound webhook deliveries, outbound
 * events and deliveries, sync events), 3 webhook endpoints and 3 provider connections.
 */
export async function seedLists(db: BenchDatabase): Promise<void> {
  const k = db.db;
  const g50 = 'cross join generate_series(1, 50) g';
  const ts = `now() - (random() * 90) * interval '1 day'`;
  await k.raw(`insert into subscriptions (tenant_id, provider, mode, status, external_id, app_user_id, product_id, created_at, updated_at)
    select t.id, (array['psp_a','psp_b','psp_c','store_android','store_ios'])[1 + g % 5], case when g % 4 = 0 then 'test' else 'live' end,
      (array['trialing','active','past_due','canceled','expired'])[1 + g % 5], 'sub_' || g, 'user_' || g,
      (select p.id from products p where p.tenant_id = t.id order by p.sku limit 1 offset (g % 3)), c, c
    from tenants t ${g50} cross join lateral (select ${ts} as c) x`);
  await k.raw(
    `insert into coupons (tenant_id, code, percent_off, created_at, updated_at) select t.id, 'CODE' || g, 10 + g % 50, c, c from tenants t ${g50} cross join lateral (select ${ts} as c) x`,
  );
  await k.raw(
    `insert into coupon_counterparts (coupon_id, tenant_id, provider, kind, external_id) select c.id, c.tenant_id, 'psp_a', 'coupon', 'co_' || c.id from coupons c`,
  );
  await k.raw(`insert into audit_entries (tenant_id, action, actor_type, actor_id, outcome, detail, created_at, updated_at)
    select t.id, 'products.create', 'api_key', null, 'ok', jsonb_build_object('n', g), c, c from tenants t ${g50} cross join lateral (select ${ts} as c) x`);
  await k.raw(`insert into webhook_deliveries (tenant_id, provider, event_id, event_type, status, mode, payload, created_at, updated_at)
    select t.id, (array['psp_a','psp_b','psp_c'])[1 + g % 3], 'evt_' || g, 'invoice.paid', 'processed', 'live', jsonb_build_object('id', 'evt_' || g, 'amount', 999), c, c
    from tenants t ${g50} cross join lateral (select ${ts} as c) x`);
  await k.raw(`insert into webhook_endpoints (tenant_id, url, description, secret_enc, task_queue, created_at, updated_at)
    select t.id, 'https://hooks.example.com/' || g, 'endpoint ' || g, 'bench-not-a-secret', 'outbound', c, c from tenants t cross join generate_series(1, 3) g cross join lateral (select ${ts} as c) x`);
  await k.raw(`insert into outbound_events (tenant_id, type, order_key, body, created_at)
    select t.id, 'entitlement.updated', 'user_' || g, jsonb_build_object('type', 'entitlement.updated', 'data', jsonb_build_object('app_user_id', 'user_' || g)), c
    from tenants t ${g50} cross join lateral (select ${ts} as c) x`);
  await k.raw(`insert into outbound_deliveries (tenant_id, event_id, endpoint_id, status, attempts, seq, created_at, updated_at)
    select e.tenant_id, e.id, (select w.id from webhook_endpoints w where w.tenant_id = e.tenant_id order by w.id limit 1), 'succeeded', 1,
      row_number() over (), e.created_at, e.created_at from outbound_events e`);
  await k.raw(
    `insert into sync_runs (id, tenant_id, status) select gen_random_uuid(), t.id, 'succeeded' from tenants t`,
  );
  await k.raw(`insert into sync_events (tenant_id, run_id, provider, status, detail, created_at, updated_at)
    select r.tenant_id, r.id, (array['psp_a','psp_b','psp_c','store_android','store_ios'])[1 + g % 5], 'succeeded', jsonb_build_object('outcome', 'synced'), c, c
    from sync_runs r ${g50} cross join lateral (select ${ts} as c) x`);
  await k.raw(`insert into provider_connections (tenant_id, provider, account_ref, label, is_default, created_at, updated_at)
    select t.id, (array['psp_a','psp_b','psp_c'])[g], 'acct_' || g || '_' || md5(t.id::text), 'bench', true, c, c from tenants t cross join generate_series(1, 3) g cross join lateral (select ${ts} as c) x`);
  await k.raw('analyze');
}
