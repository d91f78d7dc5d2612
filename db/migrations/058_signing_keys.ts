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
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('signing_keys');
}
