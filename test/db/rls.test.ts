import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { withNoTenant, withTenant } from '../../db/tenant-tx';
import { appDb, testDb } from '../helpers/db';
import { rlsGaps, tenantTables } from '../helpers/rls';

/** Every table with a `tenant_id` column, as the run's migrated database has them (no hand-kept list). */
const TENANT_TABLES = await tenantTables(testDb());

/**
 * Walks every tenant table: tenant A's transaction can neither read nor write B's rows,
 * and a transaction with no tenant set sees nothing. Tenant transactions run on the login role's
 * connection, as the api and worker run them; rows are seeded and checked as the owner.
 */
describe('row-level security', () => {
  const db = testDb();
  const app = appDb();
  let a: string;
  let b: string;

  // One row per table for a tenant, inserted as the owner (the system actor).
  async function seed(tenantId: string, tag: string): Promise<Record<string, string>> {
    const ids: Record<string, string> = {};
    const ins = async (table: string, row: Record<string, unknown>) => {
      const [r] = await db(table)
        .insert({ tenant_id: tenantId, ...row })
        .returning('*');
      ids[table] = r.id ?? r.tenant_id;
      return r;
    };
    const user = await ins('dashboard_users', { email: `${tag}@example.test`, password_hash: 'x' });
    await ins('dashboard_sessions', {
      user_id: user.id,
      token_hash: `sess-${tag}`,
      expires_at: new Date(Date.now() + 1e6),
    });
    await ins('team_invitations', {
      email: `invited-${tag}@example.test`,
      role: 'viewer',
      token_hash: `inv-${tag}`,
      invited_by: user.id,
      expires_at: new Date(Date.now() + 1e6),
    });
    const key = await ins('api_keys', { key_hash: `hash-${tag}`, key_hint: 'sk_…', scopes: ['tenant:read'] });
    const app = await ins('apps', {
      name: 'app',
      publishable_key_test: `pk_test_${tag}`,
      publishable_key_live: `pk_live_${tag}`,
    });
    const conn = await ins('provider_connections', { provider: 'psp_a', account_ref: `acct_${tag}`, is_default: true });
    await ins('app_providers', { app_id: app.id, connection_id: conn.id, provider: 'psp_a' });
    const product = await ins('products', { sku: `sku-${tag}`, tier: 'monthly' });
    await ins('product_provider_refs', {
      product_id: product.id,
      provider: 'psp_a',
      mode: 'test',
      external_id: 'prod_1',
      synced_version: 1,
    });
    await ins('prices', { product_id: product.id, country: 'US', currency: 'USD', amount_minor: 999 });
    await ins('payment_links', {
      app_id: app.id,
      product_id: product.id,
      provider: 'psp_a',
      mode: 'test',
      external_id: 'plink_1',
      url: 'http://x',
    });
    await ins('provider_plans', {
      app_id: app.id,
      product_id: product.id,
      provider: 'psp_c',
      mode: 'test',
      external_id: 'plan_1',
    });
    const coupon = await ins('coupons', { code: `C-${tag}`, percent_off: 10 });
    await ins('coupon_counterparts', { coupon_id: coupon.id, provider: 'psp_a', kind: 'coupon', external_id: 'co_1' });
    await ins('paywalls', { config: { title: tag } });
    const sub = await ins('subscriptions', {
      provider: 'psp_a',
      mode: 'test',
      status: 'active',
      external_id: `sub_${tag}`,
      email: `${tag}@x.test`,
    });
    // Written by the trigger of migration 019, not inserted by hand.
    ids.subscription_changes = (await db('subscription_changes').where({ subscription_id: sub.id }).first()).id;
    // Likewise the product history's first row (migration 037).
    ids.subscription_product_changes = (
      await db('subscription_product_changes').where({ subscription_id: sub.id }).first()
    ).id;
    const ent = await ins('entitlements', {
      app_user_id: `u-${tag}`,
      provider: 'psp_a',
      state: 'active',
      subscription_id: sub.id,
    });
    await ins('webhook_deliveries', {
      provider: 'psp_a',
      event_id: `evt_${tag}`,
      event_type: 'charge.refunded',
      status: 'processed',
      payload: {},
    });
    await ins('audit_entries', { action: 'sync.run', actor_type: 'api_key', outcome: 'ok' });
    const [run] = await db('sync_runs').insert({ id: crypto.randomUUID(), tenant_id: tenantId }).returning('*');
    ids.sync_runs = run.id;
    await ins('sync_events', { run_id: run.id, provider: 'psp_a', status: 'ok' });
    await ins('store_purchase_tokens', {
      provider: 'store_android',
      token_hash: `tok-${tag}`,
      app_user_id: 'u',
      entitlement_id: ent.id,
    });
    await db('rate_limit_buckets').insert({ tenant_id: tenantId, tokens: 120 });
    ids.rate_limit_buckets = tenantId;
    await db('client_rate_limit_buckets').insert({ tenant_id: tenantId, bucket: 'sdk', tokens: 10 });
    ids.client_rate_limit_buckets = tenantId;
    await db('store_purchase_misses').insert({
      tenant_id: tenantId,
      provider: 'store_android',
      token_hash: `miss-${tag}`,
      expires_at: new Date(Date.now() + 60_000),
    });
    ids.store_purchase_misses = tenantId;
    // The overview's rollups (migration 023): written by the triggers above, keyed by the tenant.
    for (const t of ['overview_subscription_counts', 'overview_entitlement_counts', 'overview_change_days'])
      ids[t] = tenantId;
    const endpoint = await ins('webhook_endpoints', {
      url: 'https://example.test/hook',
      secret_enc: 'v1:x',
      task_queue: 'billing',
    });
    const event = await ins('outbound_events', { type: 'sync_run.finished', order_key: 'evt-x', body: {} });
    const delivery = await ins('outbound_deliveries', { event_id: event.id, endpoint_id: endpoint.id });
    await ins('outbound_attempts', { delivery_id: delivery.id, attempt: 1, latency_ms: 1 });
    await ins('customer_event_sequences', { subject: `user-${tag}`, seq: 1 });
    await ins('entitlement_grants', {
      app_user_id: `user-${tag}`,
      product_id: product.id,
      reason: 'support',
      expires_at: new Date(Date.now() + 86_400_000),
      granted_by: 'user:test',
    });
    // Provisional access at receipt (migration 045): a grant of the same app user and product.
    await ins('provisional_access', {
      provider: 'psp_a',
      kind: 'grant',
      customer_key: `cus-${tag}`,
      app_user_id: `user-${tag}`,
      product_id: product.id,
      event_at: new Date(),
      expires_at: new Date(Date.now() + 60_000),
    });
    await db('outbound_drains').insert({
      tenant_id: tenantId,
      endpoint_id: endpoint.id,
      lease_until: new Date(Date.now() + 60_000),
    });
    ids.outbound_drains = endpoint.id;
    const imp = await ins('imports', { provider: 'store_ios', source: 'file' });
    await ins('import_items', {
      import_id: imp.id,
      line: 2,
      provider: 'store_ios',
      ref: `tx-${tag}`,
      app_user_id: 'u',
    });
    ids.import_items = tenantId;
    // A write held for a person's approval (migration 035).
    await ins('held_changes', {
      operation: 'products.update',
      input: { sku: `sku-${tag}` },
      requested_by_key: key.id,
      surface: 'tool',
      plan: { summary: 's', targets: ['catalogue'], basis: null },
      expires_at: new Date(Date.now() + 60_000),
    });
    // Chart sums and exchange rates (migration 047); chart_pending has the trigger's rows for the subscription.
    const dims = { mode: 'live', provider_key: 'psp_a', product: '*', country: '*' };
    await ins('chart_day_sums', { pattern: 1, ...dims, day: '2026-01-01', currency: 'USD', charged: '', revenue: 1 });
    await ins('chart_retention_sums', { pattern: 1, ...dims, cohort: '2026-01-01', month: '2026-01-01', size: 1 });
    await ins('chart_ltv_sums', { ...dims, day: '2026-01-01', currency: '', customers: 1 });
    await ins('chart_subscription_facts', {
      subscription_id: crypto.randomUUID(),
      mode: 'live',
      provider: 'psp_a',
      product: '',
      country: '',
      customer: `u-${tag}`,
      history: JSON.stringify([]),
      computed_at: 0,
    });
    await ins('chart_customer_facts', { customer: `u-${tag}`, computed_at: 0 });
    await ins('chart_pending', { subscription_id: null });
    await ins('chart_fold_state', { folded_at: new Date() });
    await ins('exchange_rates', { from_currency: 'EUR', to_currency: 'USD', valid_from: '2026-01-01', rate: 1.08 });
    await ins('reconciliations', {
      run_id: crypto.randomUUID(),
      provider: 'psp_a',
      subscription_external_id: `sub_${tag}`,
      provider_state: JSON.stringify({ status: 'active', current_period_end: null }),
      applied: JSON.stringify([]),
    });
    // The scheduled reconciliation's settings (migration 042): keyed by the tenant.
    await ins('reconciliation_settings', { web_interval_minutes: 30 });
    // Wrong passwords for the member since their last log-in.
    await ins('dashboard_sign_in_failures', { user_id: user.id, address_key_hash: `addr-${tag}`, failures: 1 });
    // Restores that move a purchase (migration 057): the tenant's policy (keyed by the tenant) and a transfer.
    await ins('transfer_settings', { restore_behavior: 'review' });
    await ins('transfers', {
      status: 'pending',
      policy: 'review',
      provider: 'store_android',
      token_hash: `tok-${tag}`,
      purchase_key: `tok-${tag}`,
      from_app_user_id: 'u',
      to_app_user_id: `v-${tag}`,
    });
    // A person's consent to an assistant (docs/assistant-sign-in.md).
    await ins('assistant_grants', {
      user_id: user.id,
      grant_id: `grant-${tag}`,
      client_id: `client-${tag}`,
      client_name: 'Assistant',
      redirect_host: '127.0.0.1:1',
      role: 'viewer',
    });
    // RevenueCat-format keys, attributes and aliases (docs/revenuecat-compatibility.md).
    await ins('revenuecat_keys', {
      app_id: app.id,
      platform: 'web',
      mode: 'test',
      key_hash: `rc-${tag}`,
      key_hint: 'rcb_sb_…',
    });
    await ins('subscriber_attributes', { app_user_id: `u-${tag}`, name: '$email', value: 'x', set_at_ms: 1 });
    await ins('app_user_aliases', { alias_id: `$RCAnonymousID:${tag}`, app_user_id: `u-${tag}` });
    // A web purchase's move refused by the restore policy, kept once per decision (migration 073).
    await ins('transfer_refusals', {
      provider: 'psp_a',
      token_hash: `sub_${tag}`,
      from_app_user_id: `u-${tag}`,
      to_app_user_id: `v-${tag}`,
      policy: 'keep_with_original',
    });
    // A customer's erasure, kept as counts under a pseudonym (docs/support.md, "Erasure"; migrations 069, 076).
    await ins('customer_erasures', {
      erased_as: `erased_${tag}`,
      app_user_id_sha256: tag,
      removed: {},
      erased_by: 'operator',
    });
    // The support desk's notes on a customer (docs/support.md, "Notes").
    await ins('customer_notes', { app_user_id: `u-${tag}`, body: 'note', written_by: 'operator' });
    // A turn of the tenant's imports and reconciliations in the worker: keyed by the tenant.
    await ins('tenant_work_leases', { holder: `import-${tag}`, lease_until: new Date(Date.now() + 60_000) });
    // A signed daily digest, an export and one stored file of it in one part (migration 060).
    await ins('event_digests', { day: '2026-01-01', events: 0, chains: 0, root: 'r', signature: 's' });
    const exp = await ins('exports', { format: 'csv', workflow_id: `export-${tag}` });
    await ins('export_files', {
      export_id: exp.id,
      name: 'events.v1.csv',
      table_name: 'events',
      rows: 0,
      bytes: 1,
      sha256: 'x',
      parts: 1,
    });
    ids.export_files = tenantId;
    await ins('export_file_parts', { export_id: exp.id, name: 'events.v1.csv', part: 0, data: Buffer.from('x') });
    ids.export_file_parts = tenantId;
    // A scheduled export's destination, a run of it and a table's watermark (migration 067).
    await ins('export_destinations', {
      endpoint: 'https://storage.example',
      region: 'r',
      bucket: 'b',
      credentials_sealed: 'sealed',
    });
    await ins('export_destination_runs', { seq: 1, window_end: new Date() });
    await ins('export_watermarks', { table_name: 'events', watermark: new Date() });
    return ids;
  }

  let idsB: Record<string, string>;
  beforeAll(async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    [{ id: a }] = await db('tenants')
      .insert({ name: `A-${tag}` })
      .returning('id');
    [{ id: b }] = await db('tenants')
      .insert({ name: `B-${tag}` })
      .returning('id');
    await seed(a, `a${tag}`);
    idsB = await seed(b, `b${tag}`);
  });
  afterAll(async () => {
    await db('tenants').whereIn('id', [a, b]).del();
  });

  it('covers every table that has a tenant_id column: RLS enabled and forced, the tenant policy, a seeded row', async () => {
    expect(TENANT_TABLES.length).toBeGreaterThan(40);
    expect(await rlsGaps(db)).toEqual([]);
    // The walk below needs a row of B's in each: a new tenant table gets its row in seed().
    expect(TENANT_TABLES.filter((t) => !(t in idsB))).toEqual([]);
    const forced = await db('pg_class')
      .whereIn('relname', [...TENANT_TABLES, 'tenants'])
      .select('relname', 'relrowsecurity', 'relforcerowsecurity');
    expect(forced).toHaveLength(TENANT_TABLES.length + 1);
    for (const r of forced)
      expect([r.relname, r.relrowsecurity, r.relforcerowsecurity]).toEqual([r.relname, true, true]);
  });

  it('the check finds a tenant table without FORCE, without RLS or without the tenant policy', async () => {
    // A scratch schema of this run's database, dropped after: tables made the ways a migration could get it wrong.
    const schema = `rls_probe_${crypto.randomUUID().slice(0, 8)}`;
    const policy = (t: string) =>
      `create policy ${t}_tenant on ${schema}.${t} to billing_app
         using (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
         with check (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)`;
    await db.raw(`create schema ${schema}`);
    try {
      for (const t of ['held', 'not_forced', 'not_enabled', 'no_policy'])
        await db.raw(`create table ${schema}.${t} (id serial primary key, tenant_id uuid not null)`);
      await db.raw(`create table ${schema}.no_tenant (id serial primary key)`);
      for (const t of ['held', 'not_forced', 'no_policy'])
        await db.raw(`alter table ${schema}.${t} enable row level security`);
      for (const t of ['held', 'not_enabled', 'no_policy'])
        await db.raw(`alter table ${schema}.${t} force row level security`);
      for (const t of ['held', 'not_forced', 'not_enabled']) await db.raw(policy(t));
      // A policy that lets the app role see every row is not the tenant policy.
      await db.raw(`create policy no_policy_all on ${schema}.no_policy to billing_app using (true) with check (true)`);

      expect(await tenantTables(db, schema)).toEqual(['held', 'no_policy', 'not_enabled', 'not_forced']);
      expect(await rlsGaps(db, schema)).toEqual([
        "no_policy: no policy holding billing_app to the tenant's rows",
        'not_enabled: row-level security not enabled',
        'not_forced: row-level security not forced (its owner would bypass it)',
      ]);
      await db.raw(`alter table ${schema}.not_forced force row level security`);
      expect(await rlsGaps(db, schema)).not.toContain(expect.stringMatching(/^not_forced/));
    } finally {
      await db.raw(`drop schema ${schema} cascade`);
    }
  });

  for (const table of TENANT_TABLES) {
    it(`${table}: tenant A sees only its own rows and cannot touch B's`, async () => {
      // Tables keyed by the tenant or by an endpoint (no id column of their own).
      const key = [
        'rate_limit_buckets',
        'client_rate_limit_buckets',
        'store_purchase_misses',
        'overview_subscription_counts',
        'overview_entitlement_counts',
        'overview_change_days',
        'import_items',
        'customer_event_sequences',
        'reconciliation_settings',
        'transfer_settings',
        'transfer_refusals',
        'customer_erasures',
        'chart_day_sums',
        'chart_retention_sums',
        'chart_ltv_sums',
        'chart_subscription_facts',
        'chart_customer_facts',
        'chart_pending',
        'chart_fold_state',
        'exchange_rates',
        'tenant_work_leases',
        'event_digests',
        'export_files',
        'export_watermarks',
        'export_file_parts',
      ].includes(table)
        ? 'tenant_id'
        : table === 'outbound_drains'
          ? 'endpoint_id'
          : 'id';
      await withTenant(app, a, async (trx: Knex.Transaction) => {
        const rows = await trx(table).select('tenant_id');
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.every((r) => r.tenant_id === a)).toBe(true);
        expect(await trx(table).where(key, idsB[table])).toHaveLength(0);
        // Updates and deletes of B's row silently match nothing.
        expect(await trx(table).where(key, idsB[table]).update({ tenant_id: a })).toBe(0);
        expect(await trx(table).where(key, idsB[table]).del()).toBe(0);
      });
      // Writing a row that names tenant B is refused by the policy's WITH CHECK.
      await expect(
        withTenant(app, a, async (trx) => {
          await trx.raw('savepoint s');
          await trx(table).where('tenant_id', a).limit(1).update({ tenant_id: b });
        }),
      ).rejects.toThrow(/row-level security|violates/);
      const stillB = await db(table).where(key, idsB[table]).first();
      expect(stillB.tenant_id).toBe(b);
      await withNoTenant(app, async (trx) => {
        expect(await trx(table).select()).toHaveLength(0);
      });
    });
  }

  it('tenants: a tenant reads only its own row; no tenant, none', async () => {
    await withTenant(app, a, async (trx) => {
      expect((await trx('tenants').select('id')).map((r) => r.id)).toEqual([a]);
    });
    await withNoTenant(app, async (trx) => {
      expect(await trx('tenants').select('id')).toHaveLength(0);
    });
  });
});
