import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';

/**
 * The deployment's signing keys (docs/entitlement-tokens.md, "Keys"): Ed25519 keys that sign
 * entitlement tokens and the daily digests, published at `/.well-known/jwks.json`. Per
 * deployment, not per tenant: no `tenant_id`, no row-level security; every tenant's tokens name
 * their tenant in `aud`. The private key is a vault envelope bound to its kid and column, kept
 * while the key signs: retiring or withdrawing a key erases it (nothing needs it again), so
 * only the signer's depends on MASTER_KEY. At most one key is active (the partial unique index), so two
 * processes making the first key at once make one.
 *
 * The login role (the api makes the first key at start, the worker's scheduled rotation makes
 * the next) selects, inserts and updates; nobody deletes: a withdrawn key's row stays, its
 * private half gone, as the record of what was trusted when.
 */
// `token_invalidated` in entitlement.* events (docs/outbound-webhooks.md): true when this change
// took away or shortened access that a token issued before it may still state (tokens state an
// active entitlement until its end, grace included, and one past its end a minute at a time), so
// the tenant's backend knows to distrust tokens of this app user issued before the event. The
// one change it leaves false is the expiry the service's own timer makes within a second of the
// stated end: every token issued before it has already expired.
const END = (r: string) =>
  `case when ${r}.state = 'grace_period' then coalesce(${r}.grace_until, ${r}.expires_at) else ${r}.expires_at end`;
const INVALIDATED = `(tg_op = 'UPDATE' and old.state in ('active', 'grace_period')
        and (new.state not in ('active', 'grace_period')
             or coalesce(${END('new')}, 'infinity') < coalesce(${END('old')}, 'infinity'))
        and not (new.state = 'expired' and ${END('old')} is not null
                 and now() >= ${END('old')} and now() < ${END('old')} + interval '1 second'))`;

function entitlementFunctions(withField: boolean): string[] {
  const field = withField ? `,\n        'token_invalidated', ${INVALIDATED}` : '';
  const grantEnd = withField
    ? `,\n        'token_invalidated', (tg_op = 'UPDATE' and old.state = 'active' and (new.state <> 'active'
             or coalesce(new.expires_at, 'infinity') < coalesce(old.expires_at, 'infinity')))`
    : '';
  return [
    `CREATE OR REPLACE FUNCTION public.outbound_on_entitlement() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare v_status text; v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'entitlement.' || new.state) then return null; end if;
      select s.status into v_status from subscriptions s where s.id = new.subscription_id and s.tenant_id = new.tenant_id;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'source', 'paid',
        'reason', v_status, 'provider', new.provider, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', new.subscription_id, 'is_sandbox', new.is_sandbox,
        'expires_at', new.expires_at, 'grace_until', new.grace_until${field}));
      return null;
    end $$`,
    `CREATE OR REPLACE FUNCTION public.outbound_on_grant() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare v_sku text;
    begin
      if not outbound_wanted(new.tenant_id, 'entitlement.' || new.state) then return null; end if;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'source', 'grant', 'grant_id', new.id,
        'reason', 'grant', 'provider', null, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', null, 'is_sandbox', false,
        'expires_at', new.expires_at, 'grace_until', null${grantEnd}));
      return null;
    end $$`,
  ];
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('signing_keys', (t) => {
    t.text('kid').primary();
    t.jsonb('public_jwk').notNullable();
    t.text('private_key_enc');
    t.text('state').notNullable().defaultTo('active');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('retired_at', { useTz: true });
    t.timestamp('withdrawn_at', { useTz: true });
  });
  await knex.raw(`alter table signing_keys add constraint signing_keys_state_check
      check (state in ('active', 'retired', 'withdrawn'))`);
  await knex.raw(`alter table signing_keys add constraint signing_keys_private_check
      check ((state = 'active') = (private_key_enc is not null))`);
  await knex.raw(`create unique index signing_keys_one_active on signing_keys ((true)) where state = 'active'`);
  await knex.raw(`grant select, insert, update on signing_keys to ${LOGIN_ROLE}`);
  for (const sql of entitlementFunctions(true)) await knex.raw(sql);
}

export async function down(knex: Knex): Promise<void> {
  for (const sql of entitlementFunctions(false)) await knex.raw(sql);
  await knex.schema.dropTable('signing_keys');
}
