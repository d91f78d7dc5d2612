import type { Knex } from 'knex';
import { isUuid } from '../domain/ids';
import type { TenantTransactionConfig } from './knex';
import { collectNotifications, sendCollected } from './entitlement-notify';

/** The non-owner role every tenant transaction runs as; row-level security applies to it. */
export const APP_ROLE = 'billing_app';

/**
 * Run a unit of work as tenant `tenantId`: one transaction that drops to the
 * non-owner role and sets `app.tenant_id` for its own duration only
 * (`set_config(..., true)`), so RLS filters every read and checks every write.
 * The entitlement notifications it asks for are sent once it has committed (nothing on a
 * rollback), not inside it: a NOTIFY in a writing transaction holds Postgres's one server-wide
 * notify lock through the commit's WAL flush (db/entitlement-notify.ts).
 */
export async function withTenant<T>(
  db: Knex,
  tenantId: string,
  work: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  const config = { beginSql: tenantSettingsSql(tenantId, 'withTenant') } as TenantTransactionConfig;
  // Inside another transaction this is a savepoint, whose release commits nothing: its writes notify in it.
  if ((db as Knex.Transaction).isTransaction) return db.transaction(work, config);
  let pending = new Set<string>();
  const result = await db.transaction((trx) => {
    pending = collectNotifications(trx);
    return work(trx);
  }, config);
  await sendCollected(db, pending);
  return result;
}

/**
 * The statement that makes a transaction the tenant's: the app role and `app.tenant_id`, both for
 * the transaction only. The id is validated as a uuid, so it can be inlined: the settings then
 * travel with BEGIN in one message (withTenant here, readAsTenant in db/tenant-read.ts).
 */
export function tenantSettingsSql(tenantId: string, caller: string): string {
  if (!isUuid(tenantId)) throw new Error(`${caller}: tenant id must be a uuid`);
  return `select set_config('role', '${APP_ROLE}', true), set_config('app.tenant_id', '${tenantId.toLowerCase()}', true)`;
}

/** A transaction as the app role with no tenant set: RLS makes every tenant table empty. */
export async function withNoTenant<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(work, {
    beginSql: `select set_config('role', '${APP_ROLE}', true)`,
  } as TenantTransactionConfig);
}
