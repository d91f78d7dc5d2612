import type { Knex } from 'knex';

/** The non-owner role every tenant transaction runs as; row-level security applies to it. */
export const APP_ROLE = 'billing_app';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Run a unit of work as tenant `tenantId`: one transaction that drops to the
 * non-owner role and sets `app.tenant_id` for its own duration only
 * (`set_config(..., true)`), so RLS filters every read and checks every write.
 */
export async function withTenant<T>(db: Knex, tenantId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if (!UUID_RE.test(tenantId)) throw new Error('withTenant: tenant id must be a uuid');
  return db.transaction(async (trx) => {
    await trx.raw(`select set_config('role', ?, true), set_config('app.tenant_id', ?, true)`, [APP_ROLE, tenantId]);
    return work(trx);
  });
}

/** A transaction as the app role with no tenant set: RLS makes every tenant table empty. */
export async function withNoTenant<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw(`select set_config('role', ?, true)`, [APP_ROLE]);
    return work(trx);
  });
}
