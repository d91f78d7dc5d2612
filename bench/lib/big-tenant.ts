import type { Knex } from 'knex';

/**
 * A year of one tenant's subscriptions, seeded in bulk with the trigger off and the history
 * written alongside: 30 % start with a trial (two thirds of those convert after 7 days), 20 %
 * are cancelled, 3 % refunded, 5 % past due; 90 % live, 10 % test; five providers; buyers in five
 * countries (a fifth unknown).
 */
export async function seedBigTenant(owner: Knex, tenantId: string, count: number, log: (m: string) => void) {
  const t0 = Date.now();
  await owner.raw(
    `insert into products (tenant_id, sku, name, tier)
    select ?::uuid, 'ov_' || t, 'Overview ' || t, t from unnest(array['weekly','monthly','quarterly','annual']) t`,
    [tenantId],
  );
  await owner.raw(
    `insert into prices (tenant_id, product_id, country, currency, amount_minor)
    select p.tenant_id, p.id, c.country, c.currency, c.amount from products p
      cross join (values ('US','USD',999), ('DE','EUR',899), ('JP','JPY',1200)) c(country, currency, amount)
     where p.tenant_id = ? and p.sku like 'ov_%'`,
    [tenantId],
  );
  await owner.raw('alter table subscriptions disable trigger subscriptions_record_change');
  await owner.raw(
    `
    create unlogged table seed_subs as
    select g, gen_random_uuid() as id,
           (array['psp_a','psp_b','psp_c','store_android','store_ios'])[1 + g % 5] as provider,
           case when g % 10 = 0 then 'test' else 'live' end as mode,
           now() - (random() * 730) * interval '1 day' as born,
           g % 10 < 3 as trial, (g % 10 < 3 and g % 3 <> 0) as converted,
           case when g % 100 < 3 then 'refunded' when g % 100 < 23 then 'canceled' when g % 100 < 28 then 'past_due' else null end as fate,
           random() as r
      from generate_series(1, ?) g`,
    [count],
  );
  await owner.raw(
    `
    insert into subscriptions (id, tenant_id, provider, mode, status, product_id, external_id, app_user_id, country, created_at, updated_at)
    select s.id, ?::uuid, s.provider, s.mode,
           case when s.fate is not null and s.born < now() - interval '8 days' then s.fate
                when s.trial and (not s.converted or s.born > now() - interval '7 days') then 'trialing'
                else 'active' end,
           (select p.id from products p where p.tenant_id = ? and p.sku like 'ov_%' order by p.sku offset s.g % 4 limit 1),
           'sub_' || s.g || '_' || ?, 'user_' || s.g, (array['US','DE','JP','FR',null])[1 + (s.g / 5) % 5], s.born, s.born
      from seed_subs s`,
    [tenantId, tenantId, tenantId.slice(0, 8)],
  );
  // The history that leads to each status: start, conversion a week later, then the fate at a random later time.
  await owner.raw(
    `
    insert into subscription_changes (tenant_id, subscription_id, provider, mode, from_status, to_status, changed_at)
    select ?::uuid, s.id, s.provider, s.mode, null, case when s.trial then 'trialing' else 'active' end, s.born from seed_subs s
    union all
    select ?::uuid, s.id, s.provider, s.mode, 'trialing', 'active', s.born + interval '7 days' from seed_subs s
     where s.trial and s.converted and s.born <= now() - interval '7 days'
    union all
    select ?::uuid, s.id, s.provider, s.mode, case when s.trial and not s.converted then 'trialing' else 'active' end, s.fate,
           s.born + interval '8 days' + s.r * (now() - s.born - interval '8 days')
      from seed_subs s where s.fate is not null and s.born < now() - interval '8 days'`,
    [tenantId, tenantId, tenantId],
  );
  await owner.raw('alter table subscriptions enable trigger subscriptions_record_change');
  await owner.raw(
    `
    insert into entitlements (tenant_id, app_user_id, provider, product_id, subscription_id, state, is_sandbox, created_at, updated_at)
    select s.tenant_id, s.app_user_id, s.provider, s.product_id, s.id,
           case s.status when 'refunded' then 'revoked' when 'canceled' then 'expired' when 'past_due' then 'grace_period' else 'active' end,
           s.mode = 'test', s.created_at, s.created_at
      from subscriptions s where s.tenant_id = ? and s.external_id like 'sub_%'`,
    [tenantId],
  );
  await owner.raw(
    `
    insert into webhook_deliveries (tenant_id, provider, event_id, event_type, mode, status, payload, created_at, updated_at)
    select s.tenant_id, s.provider, 'evt_' || s.id || '_' || k, 'invoice.payment_succeeded', s.mode,
           case when (hashtext(s.id::text) + k) % 50 = 0 then 'failed' else 'processed' end, '{}'::jsonb,
           s.created_at + k * ((now() - s.created_at) / 3), s.created_at
      from subscriptions s cross join generate_series(0, 2) k where s.tenant_id = ? and s.external_id like 'sub_%'`,
    [tenantId],
  );
  await owner.raw(
    `
    insert into sync_runs (id, tenant_id, status, requested_by, workflow_id, created_at, finished_at)
    select gen_random_uuid(), ?::uuid, case when d % 7 = 0 then 'failed' else 'succeeded' end, 'bench', null,
           now() - d * interval '1 day', now() - d * interval '1 day' + interval '40 seconds'
      from generate_series(1, 365) d`,
    [tenantId],
  );
  await owner.raw('drop table seed_subs');
  log(`tenant ${tenantId}: ${count} subscriptions with two years of history seeded in ${Date.now() - t0} ms`);
}
