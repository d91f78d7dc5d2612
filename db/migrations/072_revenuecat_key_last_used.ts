import type { Knex } from 'knex';
import { LOGIN_ROLE } from '../login-role';

/**
 * When a key for RevenueCat's SDKs was last used (docs/revenuecat-compatibility.md, "Keys"),
 * kept as secret keys keep theirs (`api_keys.last_used_at`): the login role finds the key by its
 * hash before any tenant is known, so it reads the column with the key and writes it, at most
 * once a minute per key, through a policy of its own (as `api_keys_login_last_used`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('revenuecat_keys', (t) => {
    t.timestamp('last_used_at', { useTz: true });
  });
  await knex.raw(
    `create policy revenuecat_keys_login_last_used on revenuecat_keys for update to ${LOGIN_ROLE} using (true) with check (true)`,
  );
  await knex.raw(`grant select (last_used_at), update (last_used_at) on revenuecat_keys to ${LOGIN_ROLE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`revoke select (last_used_at), update (last_used_at) on revenuecat_keys from ${LOGIN_ROLE}`);
  await knex.raw(`drop policy if exists revenuecat_keys_login_last_used on revenuecat_keys`);
  await knex.schema.alterTable('revenuecat_keys', (t) => {
    t.dropColumn('last_used_at');
  });
}
