import type { Knex } from 'knex';
import { isUuid } from '../domain/ids';
import type { TenantTransactionConfig } from './knex';

/** The non-owner role every tenant transaction runs as; row-level security applies to it. */
export const APP_ROLE = 'billing_app';

/**
 * Run a unit of work as tenant `tenantId`: one transaction that drops to the
 * non-owner role and sets `app.tenant_id` for its own duration only
 * (`set_config(..., true)`), so RLS filters every read and checks every write.
 */
export async function withTenant<T>(db: Knex, tenantId: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  // Validated as a uuid, so it can be inlined: the settings then travel with BEGIN in one message.
  if (!isUuid(tenantId)) throw new Error('withTenant: tenant id must be a uuid');
  const beginSql = `select set_config('role', '${APP_ROLE}', true), set_config('app.tenant_id', '${tenantId.toLowerCase()}', true)`;
  return db.transaction(work, { beginSql } as TenantTransactionConfig);
}

/** A transaction as the app role with no tenant set: RLS makes every tenant table empty. */
export async function withNoTenant<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(work, { beginSql: `select set_config('role', '${APP_ROLE}', true)` } as TenantTransactionConfig);
}
