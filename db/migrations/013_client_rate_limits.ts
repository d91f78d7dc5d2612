import type { Knex } from 'knex';
import { tenantTablePolicies } from './tenant-policies';

/**
 * Rate limits of the client endpoints (/v1/sdk/*, publishable keys), apart from the
 * management bucket (`rate_limit_buckets`): a publishable key is public, so what it spends must
 * never be what the tenant's secret keys need (docs/api-conventions.md, "Rate limit").
 *
 * - `client_rate_limit_buckets`: token buckets per (tenant, bucket name) — the tenant's client
 *   bucket and one per app user, client address or registration lane (api/sdk/limits.ts).
 *   UNLOGGED: a crash empties it, which only refills every bucket; in exchange the hot write
 *   skips the WAL. A missing row is a full bucket, so old rows can be pruned at will.
 * - `take_client_tokens`: takes one token from each named bucket, or from none (one round trip;
 *   a refused request writes nothing).
 * - `store_purchase_misses`: purchase tokens the store answered 404 for, kept briefly, so the
 *   same unknown token is refused without a workflow and a store call each time.
 * - `rate_limit_buckets` (the management bucket) becomes UNLOGGED too: it is written on every
 *   management request, and a logged write makes each one generate WAL and wait for its flush
 *   at commit. A crash empties it, which refills every tenant's bucket once: an acceptable loss
 *   for a rate limit. (In a 16-caller upsert loop on this box: ~1.5× the upserts per second.)
 */
export const CLIENT_TENANT_TABLES = ['client_rate_limit_buckets', 'store_purchase_misses'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table rate_limit_buckets set unlogged');
  await knex.raw(`create unlogged table client_rate_limit_buckets (
      tenant_id uuid not null references tenants(id) on delete cascade,
      bucket text not null,
      tokens double precision not null,
      refreshed_at timestamptz not null default now(),
      primary key (tenant_id, bucket))`);
  await knex.raw(`create table store_purchase_misses (
      tenant_id uuid not null references tenants(id) on delete cascade,
      provider text not null check (provider in ('psp_a','psp_b','psp_c','store_android','store_ios')),
      token_hash text not null,
      expires_at timestamptz not null,
      primary key (tenant_id, provider, token_hash))`);
  for (const table of CLIENT_TENANT_TABLES) await tenantTablePolicies(knex, table);
  // Buckets are locked in the order given (the caller sorts them), so two requests sharing
  // buckets never deadlock. Every level is read first; tokens are written only when every
  // bucket has one, so a refusal leaves each bucket exactly as it was.
  await knex.raw(`create function take_client_tokens(p_tenant uuid, p_buckets text[], p_caps float8[], p_rates float8[])
    returns table (ok boolean, levels float8[]) language plpgsql as $fn$
    declare
      i int;
      lvl float8;
      lv float8[] := '{}';
      all_ok boolean := true;
    begin
      for i in 1 .. array_length(p_buckets, 1) loop
        select least(p_caps[i], b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * p_rates[i]) into lvl
          from client_rate_limit_buckets b where b.tenant_id = p_tenant and b.bucket = p_buckets[i] for update;
        if not found then lvl := p_caps[i]; end if;
        lv := lv || lvl;
        if lvl < 1 then all_ok := false; end if;
      end loop;
      if not all_ok then
        return query select false, lv;
        return;
      end if;
      for i in 1 .. array_length(p_buckets, 1) loop
        insert into client_rate_limit_buckets as b (tenant_id, bucket, tokens, refreshed_at)
          values (p_tenant, p_buckets[i], p_caps[i] - 1, clock_timestamp())
          on conflict (tenant_id, bucket) do update
            set tokens = least(p_caps[i], b.tokens + extract(epoch from (clock_timestamp() - b.refreshed_at)) * p_rates[i]) - 1,
                refreshed_at = clock_timestamp()
          returning b.tokens into lvl;
        lv[i] := lvl;
      end loop;
      return query select true, lv;
    end $fn$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists take_client_tokens(uuid, text[], float8[], float8[])');
  await knex.schema.dropTableIfExists('store_purchase_misses');
  await knex.schema.dropTableIfExists('client_rate_limit_buckets');
  await knex.raw('alter table rate_limit_buckets set logged');
}
