import type { Knex } from 'knex';
import { APP_ROLE } from '../tenant-tx';

/**
 * Issue #28: Paddle (psp_b) and Razorpay (psp_c) API keys name no account in any read, so a
 * pasted key that works proves only that it works: whoever pasted any working key beside the
 * victim's account id held the account (its events routed to them, and the real owner's OAuth
 * was refused). From here (docs/providers.md, "Proving an account"):
 *
 * - For psp_b and psp_c only a proof that names the account claims it for webhook routing:
 *   OAuth (the provider's consent screen) or an emulator's control API (the demo seed and test
 *   fixtures). `provider_call` can no longer be the proof of a psp_b/psp_c connection: a trigger
 *   refuses it, whatever code runs.
 * - Connections those providers had proven with a pasted key before this migration keep routing
 *   (an upgrade must not silently stop a real seller's events), re-marked `pasted_key`: a claim
 *   any OAuth proof of the same account replaces. `pasted_key` is never written again.
 * - `release_pasted_key_claims(connection)`: the OAuth connect flow calls it, in the tenant's
 *   transaction, before proving the tenant's connection. It unproves other tenants' `pasted_key`
 *   claims on that connection's account (their connections stay, usable for API calls, with the
 *   reason on them for their dashboard). SECURITY DEFINER: those rows are other tenants'.
 *
 * Refusals (issue #28, Low): a receipt refused after its signature verified (the tenant's own
 * provider sent a malformed event) is `event_type = 'invalid'`; only those still become
 * `inbound_delivery.failed` events. An unverified request (`unverified`: anyone can send one
 * naming any account) is kept in the tenant's delivery log but pushes nothing to its endpoints.
 * The refusal index covers both kinds (each has its own per-minute cap, db/webhook-deliveries.ts).
 */
export const RELEASED_BY_OAUTH =
  "no longer receives this account's events: the account was connected with OAuth by its owner. A pasted key no longer proves a psp_b or psp_c account; this connection still works for API calls. If the account is yours, connect it with OAuth (Providers, Connect) or contact support.";

export async function up(knex: Knex): Promise<void> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  const path = `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;

  await knex.raw('alter table provider_connections drop constraint if exists provider_connections_verified_by_check');
  await knex.raw(`update provider_connections set verified_by = 'pasted_key'
      where provider in ('psp_b', 'psp_c') and verified_by = 'provider_call'`);
  await knex.raw(`alter table provider_connections
      add constraint provider_connections_verified_by_check check (verified_by in ('oauth', 'provider_call', 'control_api', 'pasted_key'))`);
  // A trigger rather than a check constraint: a check constraint on `provider` spells its whole vocabulary
  // (test/db/vocabulary.test.ts).
  await knex.raw(`create function provider_connections_key_claims() returns trigger language plpgsql as $fn$
    begin
      if new.provider in ('psp_b', 'psp_c') and new.verified_by = 'provider_call' then
        raise exception 'provider_connections_key_claims: a % account is claimed by OAuth, not by a provider call with a pasted key', new.provider
          using errcode = 'check_violation';
      end if;
      if new.provider not in ('psp_b', 'psp_c') and new.verified_by = 'pasted_key' then
        raise exception 'provider_connections_key_claims: pasted_key is a psp_b/psp_c claim only' using errcode = 'check_violation';
      end if;
      return new;
    end $fn$`);
  await knex.raw(`create trigger provider_connections_key_claims before insert or update of verified_by, provider on provider_connections
    for each row execute function provider_connections_key_claims()`);

  await knex.raw(`create function release_pasted_key_claims(p_connection uuid) returns integer
    language plpgsql volatile security definer ${path} as $fn$
    declare
      v_tenant uuid := nullif(current_setting('app.tenant_id', true), '')::uuid;
      v_provider text;
      v_account text;
      v_released integer;
    begin
      if v_tenant is null then raise exception 'release_pasted_key_claims: run inside a tenant transaction'; end if;
      select c.provider, c.account_ref into v_provider, v_account
        from provider_connections c where c.id = p_connection and c.tenant_id = v_tenant;
      if not found then raise exception 'release_pasted_key_claims: no such connection of this tenant'; end if;
      update provider_connections c
         set verified_at = null, verified_by = null, proof_checked_at = now(), proof_error = $msg$${RELEASED_BY_OAUTH.replace(/\$/g, '')}$msg$, updated_at = now()
       where c.provider = v_provider and c.account_ref = v_account and c.verified_by = 'pasted_key' and c.tenant_id <> v_tenant;
      get diagnostics v_released = row_count;
      return v_released;
    end $fn$`);
  await knex.raw('revoke execute on function release_pasted_key_claims(uuid) from public');
  await knex.raw(`grant execute on function release_pasted_key_claims(uuid) to ${APP_ROLE}`);

  await knex.raw('drop index if exists webhook_deliveries_refusals');
  await knex.raw(
    `create index webhook_deliveries_refusals on webhook_deliveries (provider, created_at) where event_type in ('unverified', 'invalid')`,
  );
  await knex.raw('drop trigger if exists outbound_inbound_failed_insert on webhook_deliveries');
  await knex.raw(`create trigger outbound_inbound_failed_insert after insert on webhook_deliveries
    for each row when (new.status = 'failed' and new.tenant_id is not null and new.event_type <> 'unverified')
    execute function outbound_on_inbound_failure()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists outbound_inbound_failed_insert on webhook_deliveries');
  await knex.raw(`create trigger outbound_inbound_failed_insert after insert on webhook_deliveries
    for each row when (new.status = 'failed' and new.tenant_id is not null) execute function outbound_on_inbound_failure()`);
  await knex.raw('drop index if exists webhook_deliveries_refusals');
  await knex.raw(
    `create index webhook_deliveries_refusals on webhook_deliveries (provider, created_at) where event_type = 'unverified'`,
  );
  await knex.raw('drop function if exists release_pasted_key_claims(uuid)');
  await knex.raw('drop trigger if exists provider_connections_key_claims on provider_connections');
  await knex.raw('drop function if exists provider_connections_key_claims()');
  await knex.raw('alter table provider_connections drop constraint if exists provider_connections_verified_by_check');
  await knex.raw(`update provider_connections set verified_by = 'provider_call' where verified_by = 'pasted_key'`);
  await knex.raw(
    `alter table provider_connections add constraint provider_connections_verified_by_check check (verified_by in ('oauth', 'provider_call', 'control_api'))`,
  );
}
