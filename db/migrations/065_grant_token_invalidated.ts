import type { Knex } from 'knex';

/**
 * `token_invalidated` on a grant's `entitlement.*` event (docs/outbound-webhooks.md) follows the
 * rule paid entitlements follow since 058: a grant expiring at its stated end says `false`, as
 * every token stating it expired with it (a token's `exp` never passes the end it lists). Until
 * now any end of an active grant said `true`, so each timely expiry told the tenant's backend to
 * distrust the app user's earlier tokens, those vouching for other access too. A revoke, an end
 * moved earlier, or an expiry heard of more than a second late (tokens issued meanwhile vouch a
 * minute at a time) still say `true`. The rest of the function is 060's, unchanged.
 */
const QUIET = `coalesce(current_setting('app.outbound_quiet', true), '') = 'on'`;

const ENDED = `(tg_op = 'UPDATE' and old.state = 'active' and (new.state <> 'active'
             or coalesce(new.expires_at, 'infinity') < coalesce(old.expires_at, 'infinity')))`;
const ON_TIME = `(new.state = 'expired' and old.expires_at is not null
                 and now() >= old.expires_at and now() < old.expires_at + interval '1 second')`;

const grantTrigger = (invalidated: string) => `
CREATE OR REPLACE FUNCTION public.outbound_on_grant() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    declare v_sku text;
    begin
      if ${QUIET} then return null; end if;
      select p.sku into v_sku from products p where p.id = new.product_id and p.tenant_id = new.tenant_id;
      perform record_outbound_event(new.tenant_id, 'entitlement.' || new.state, new.app_user_id, jsonb_build_object(
        'app_user_id', new.app_user_id, 'state', new.state,
        'previous_state', case when tg_op = 'UPDATE' then old.state end,
        'source', 'grant', 'grant_id', new.id,
        'reason', 'grant', 'provider', null, 'product_id', new.product_id, 'sku', v_sku,
        'subscription_id', null, 'is_sandbox', false,
        'expires_at', new.expires_at, 'grace_until', null,
        'token_invalidated', ${invalidated}));
      return null;
    end $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(grantTrigger(`(${ENDED} and not ${ON_TIME})`));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(grantTrigger(ENDED));
}
