import crypto from 'node:crypto';
import fs from 'node:fs';
import { freePort } from '../../runtime/ports';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, withDatabase } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import { generateSecretKey, hashSecretKey } from '../../db/key-material';
import { keyHint } from '../../domain/keys';
import { SCOPES } from '../../domain/scopes';
import { ensurePostgres, type PostgresHandle } from '../../runtime/postgres';

export interface BenchTenant {
  id: string;
  key: string;
}

export interface BenchDatabase {
  /** Owner URL of the throwaway database. */
  url: string;
  name: string;
  /** Owner connection (small pool) for seeding and resets between phases. */
  db: Knex;
  tenants: BenchTenant[];
  entitlements: number;
  pgVersion: string;
  embedded: boolean;
  /** Reset every tenant's rate-limit bucket to full, so phases do not inherit each other's spend. */
  refillBuckets(): Promise<void>;
  /** Pids of this database's backends opened with this application_name (one server's pool). */
  backendPids(applicationName: string): Promise<number[]>;
  drop(): Promise<void>;
}

/**
 * A throwaway database `billing_bench_<ts>` on DATABASE_URL (or a throwaway embedded Postgres),
 * migrated and seeded as the owner: `tenants` tenants, each with 3 products and 50–100
 * entitlements, and one all-scope secret key per tenant.
 */
export async function createBenchDatabase(opts: { tenants: number; log: (m: string) => void }): Promise<BenchDatabase> {
  let pg: PostgresHandle;
  let tmpDir: string | undefined;
  if (process.env.DATABASE_URL) {
    pg = await ensurePostgres({ databaseUrl: process.env.DATABASE_URL, dataDir: '' });
  } else {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-bench-pg-'));
    fs.chmodSync(tmpDir, 0o777);
    opts.log(`no DATABASE_URL: starting an embedded Postgres in ${tmpDir}`);
    pg = await ensurePostgres(
      { dataDir: tmpDir },
      { dir: path.join(tmpDir, 'pg'), port: await freePort(), persistent: false },
    );
  }
  const name = `billing_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${crypto.randomBytes(2).toString('hex')}`;
  const admin = createKnex(pg.url, { max: 1 });
  await admin.raw(`create database "${name}"`);
  const url = withDatabase(pg.url, name);
  const db = createKnex(url, { max: 2 });

  const drop = async () => {
    await db.destroy().catch(() => {});
    await admin
      .raw(`drop database if exists "${name}" with (force)`)
      .catch((e) => opts.log(`drop failed: ${e.message}`));
    await admin.destroy().catch(() => {});
    await pg.stop().catch(() => {});
    if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  };

  try {
    const t0 = Date.now();
    await migrateLatest(db);
    const pgVersion = String((await db.raw('show server_version')).rows[0].server_version);

    // Bulk seed in a handful of statements (the owner is the system actor; RLS lets it through).
    const tenantRows: { id: string }[] = (
      await db.raw(`insert into tenants (name) select 'bench tenant ' || g from generate_series(1, ?) g returning id`, [
        opts.tenants,
      ])
    ).rows;
    await db.raw(`
      insert into products (tenant_id, sku, name, tier)
      select t.id, 'sku_' || k, 'Product ' || k, (array['weekly','monthly','annual'])[k]
      from tenants t cross join generate_series(1, 3) k`);
    const ent = await db.raw(`
      insert into entitlements (tenant_id, app_user_id, provider, product_id, state, is_sandbox, expires_at, created_at, updated_at)
      select t.id,
             'user_' || g,
             (array['psp_a','psp_b','psp_c','store_android','store_ios'])[1 + (g % 5)],
             (select p.id from products p where p.tenant_id = t.id order by p.sku limit 1 offset (g % 3)),
             (array['active','active','active','grace_period','expired','revoked'])[1 + (g % 6)],
             g % 7 = 0,
             now() + ((g % 60) - 20) * interval '1 day',
             c, c
      from tenants t
      cross join lateral generate_series(1, 50 + (abs(hashtext(t.id::text)) % 51)) g
      cross join lateral (select now() - (random() * 90) * interval '1 day' as c) ts`);
    const tenants: BenchTenant[] = tenantRows.map((r) => ({ id: r.id, key: generateSecretKey() }));
    for (let i = 0; i < tenants.length; i += 500) {
      await db('api_keys').insert(
        tenants.slice(i, i + 500).map((t) => ({
          tenant_id: t.id,
          name: 'bench',
          key_hash: hashSecretKey(t.key),
          key_hint: keyHint(t.key),
          scopes: [...SCOPES],
        })),
      );
    }
    await db.raw('analyze');
    opts.log(
      `database ${name}: ${tenants.length} tenants, ${ent.rowCount} entitlements, ${tenants.length} keys, seeded in ${Date.now() - t0} ms`,
    );
    return {
      url,
      name,
      db,
      tenants,
      entitlements: ent.rowCount,
      pgVersion,
      embedded: pg.embedded,
      refillBuckets: async () => {
        await db.raw(`update rate_limit_buckets set tokens = 120, refreshed_at = clock_timestamp()`);
      },
      backendPids: async (applicationName) =>
        (
          await db.raw('select pid from pg_stat_activity where datname = ? and application_name = ?', [
            name,
            applicationName,
          ])
        ).rows.map((r: { pid: number }) => r.pid),
      drop,
    };
  } catch (e) {
    await drop();
    throw e;
  }
}

export { freePort };
