import type { Knex } from 'knex';
import { APP_ROLE } from '../tenant-tx';
import { LOGIN_ROLE } from '../login-role';

/**
 * The api and worker connect as `billing_api`, not as the owner (docs/tenancy-and-rls.md,
 * "Roles"). It is NOINHERIT: it holds none of `billing_app`'s rights, only the right to become
 * it (`withTenant`), plus what this migration grants it by name — the "system" work that runs
 * before any tenant is known. Each grant is the columns and commands that work uses, and each
 * policy the rows; nothing else of any table is visible to it.
 *
 * Rows "of a tenant born in this transaction" (`BORN_HERE`): sign-up creates a tenant and its
 * first app, key and user in one transaction. `tenants.created_at` defaults to now(), the
 * transaction's start, so the login role can fill in a tenant it has just created and no other.
 *
 * The role itself is cluster-wide and created here if missing (parallel test databases race to
 * do so); its LOGIN, password and attributes are set by the step that runs migrations
 * (db/login-role.ts), since they depend on the deployment, not the schema.
 */
const BORN_HERE = `tenant_id in (select t.id from tenants t where t.created_at = now())`;

const policy = (table: string, name: string, command: string, clauses: string) =>
  `create policy ${table}_login_${name} on ${table} for ${command} to ${LOGIN_ROLE} ${clauses}`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`do $$ begin
      if not exists (select 1 from pg_roles where rolname = '${LOGIN_ROLE}') then
        create role ${LOGIN_ROLE} nologin noinherit;
      end if;
    exception when duplicate_object or unique_violation then null;
    end $$`);

  const statements = [
    // Sign-up (db/dashboard-users.ts signUpUser → db/tenants.ts createTenant): a new, non-demo tenant.
    `grant select, insert (name, is_demo) on tenants to ${LOGIN_ROLE}`,
    policy('tenants', 'signup', 'insert', 'with check (not is_demo)'),
    policy('tenants', 'born_here', 'select', 'using (created_at = now())'),

    // Publishable key → app (api/sdk/auth.ts); sign-up's first app. Publishable keys are public by design.
    `grant select (id, tenant_id, publishable_key_test, publishable_key_live) on apps to ${LOGIN_ROLE}`,
    `grant insert (tenant_id, name, publishable_key_test, publishable_key_live) on apps to ${LOGIN_ROLE}`,
    policy('apps', 'by_key', 'select', 'using (true)'),
    policy('apps', 'signup', 'insert', `with check (${BORN_HERE})`),

    // Secret key by hash (api/gate.ts admit, verifyKey) and its last use (api/auth.ts touchLastUsed);
    // sign-up's initial key, which signUpUser deletes again. Never key_hint.
    `grant select (id, tenant_id, key_hash, scopes, name, expires_at, revoked_at, last_used_at) on api_keys to ${LOGIN_ROLE}`,
    `grant update (last_used_at) on api_keys to ${LOGIN_ROLE}`,
    `grant insert (tenant_id, name, key_hash, key_hint, scopes, expires_at), delete on api_keys to ${LOGIN_ROLE}`,
    policy('api_keys', 'by_hash', 'select', 'using (true)'),
    policy('api_keys', 'last_used', 'update', 'using (true) with check (true)'),
    policy('api_keys', 'signup', 'insert', `with check (${BORN_HERE})`),
    policy('api_keys', 'signup_drop', 'delete', `using (${BORN_HERE})`),

    // The management rate limit, taken in the same statement as the key lookup (api/gate.ts, api/rate-limit.ts).
    `grant select, insert, update on rate_limit_buckets to ${LOGIN_ROLE}`,
    policy('rate_limit_buckets', 'take', 'all', 'using (true) with check (true)'),

    // Client rate limits and purchase misses, taken before any tenant transaction (api/sdk/limits.ts,
    // purchase-misses.ts).
    `grant select, insert, update, delete on client_rate_limit_buckets, store_purchase_misses to ${LOGIN_ROLE}`,
    policy('client_rate_limit_buckets', 'take', 'all', 'using (true) with check (true)'),
    policy('store_purchase_misses', 'remember', 'all', 'using (true) with check (true)'),

    // Webhook routing by connected account (db/connections.ts findConnectionByAccount): never a credential column.
    `grant select (id, tenant_id, provider, account_ref, is_active) on provider_connections to ${LOGIN_ROLE}`,
    policy('provider_connections', 'route', 'select', 'using (true)'),

    // Webhook receipt, refusals and the outbox hand-over (db/webhook-deliveries.ts). The payload and
    // the buyer's email are written, never read back: no select on them.
    `grant insert (tenant_id, provider, event_id, event_type, mode, status, reason, processed_at, payload, buyer_email) on webhook_deliveries to ${LOGIN_ROLE}`,
    `grant select (id, tenant_id, provider, event_id, event_type, status, delivery_count, created_at) on webhook_deliveries to ${LOGIN_ROLE}`,
    `grant update (delivery_count, updated_at, status, reason) on webhook_deliveries to ${LOGIN_ROLE}`,
    policy('webhook_deliveries', 'receive', 'insert', 'with check (true)'),
    policy('webhook_deliveries', 'receive_read', 'select', 'using (true)'),
    policy('webhook_deliveries', 'receive_update', 'update', 'using (true) with check (true)'),
    `grant select, insert, update, delete on webhook_outbox to ${LOGIN_ROLE}`,
    `grant usage on sequence webhook_outbox_id_seq to ${LOGIN_ROLE}`,

    // Dashboard log-in (db/login-attempts.ts, db/dashboard-users.ts, db/session-secret.ts).
    `grant select, insert, update, delete on dashboard_login_attempts to ${LOGIN_ROLE}`,
    `grant select (id, tenant_id, email, password_hash) on dashboard_users to ${LOGIN_ROLE}`,
    `grant insert (tenant_id, email, password_hash) on dashboard_users to ${LOGIN_ROLE}`,
    policy('dashboard_users', 'login', 'select', 'using (true)'),
    policy('dashboard_users', 'signup', 'insert', `with check (${BORN_HERE})`),
    `grant select (id, tenant_id, user_id, token_hash, expires_at, pending_secret) on dashboard_sessions to ${LOGIN_ROLE}`,
    `grant insert (tenant_id, user_id, token_hash, expires_at), update (pending_secret), delete on dashboard_sessions to ${LOGIN_ROLE}`,
    policy('dashboard_sessions', 'session', 'select', 'using (true)'),
    // A session names a user of its own tenant.
    policy(
      'dashboard_sessions',
      'login',
      'insert',
      'with check (exists (select 1 from dashboard_users u where u.id = user_id and u.tenant_id = dashboard_sessions.tenant_id))',
    ),
    policy('dashboard_sessions', 'park_secret', 'update', 'using (true) with check (true)'),
    policy('dashboard_sessions', 'logout', 'delete', 'using (true)'),
  ];
  for (const sql of statements) await knex.raw(sql);

  // `withTenant` switches to the tenant role; NOINHERIT keeps its rights out of reach otherwise.
  await knex.raw(`do $$ begin
      if not exists (select 1 from pg_auth_members m join pg_roles r on r.oid = m.roleid join pg_roles u on u.oid = m.member
                      where r.rolname = '${APP_ROLE}' and u.rolname = '${LOGIN_ROLE}') then
        grant ${APP_ROLE} to ${LOGIN_ROLE};
      end if;
    exception when unique_violation or duplicate_object then null;
    end $$`);
}

export async function down(knex: Knex): Promise<void> {
  const { rows } = await knex.raw(
    `select tablename, policyname from pg_policies where schemaname = current_schema() and policyname like '%\\_login\\_%' and ? = any(roles)`,
    [LOGIN_ROLE],
  );
  for (const r of rows as { tablename: string; policyname: string }[])
    await knex.raw(`drop policy ${r.policyname} on ${r.tablename}`);
  for (const table of [
    'tenants',
    'apps',
    'api_keys',
    'rate_limit_buckets',
    'client_rate_limit_buckets',
    'store_purchase_misses',
    'provider_connections',
    'webhook_deliveries',
    'webhook_outbox',
    'dashboard_login_attempts',
    'dashboard_users',
    'dashboard_sessions',
  ]) {
    await knex.raw(`revoke all on ${table} from ${LOGIN_ROLE}`);
  }
  await knex.raw(`revoke all on sequence webhook_outbox_id_seq from ${LOGIN_ROLE}`);
}
