import type { Row } from './row';
import type { Knex } from 'knex';
import type { Mode } from '../domain/providers';

/** The tenant's apps, oldest first. */
export function appsOfTenant(trx: Knex.Transaction): Promise<Row[]> {
  return trx('apps').orderBy('created_at').select('*');
}

export function appByName(trx: Knex.Transaction, name: string): Promise<Row | undefined> {
  return trx('apps').where({ name }).first();
}

/** The tenant's first app (the default when a caller names none). */
export async function firstAppId(trx: Knex.Transaction): Promise<string | undefined> {
  return (await trx('apps').orderBy('created_at').first('id'))?.id;
}

/**
 * Insert an app unless one of that name exists; undefined when a concurrent create of the
 * same name won the race (the caller reads theirs).
 */
export async function insertAppUnlessNamed(
  trx: Knex.Transaction,
  row: { tenant_id: string; name: string; publishable_key_test: string; publishable_key_live: string },
): Promise<Row | undefined> {
  const [inserted] = await trx('apps').insert(row).onConflict(['tenant_id', 'name']).ignore().returning('*');
  return inserted;
}

/**
 * Apps by their publishable keys (table `apps`, columns `publishable_key_test` and
 * `publishable_key_live`).
 */

/**
 * The app a publishable key belongs to, on the owner connection: the key is what names the
 * tenant, so no tenant transaction exists yet (the /v1/sdk gate).
 */
export async function findAppByPublishableKey(
  db: Knex,
  mode: Mode,
  key: string,
): Promise<{ id: string; tenant_id: string } | undefined> {
  return db('apps')
    .where(mode === 'test' ? { publishable_key_test: key } : { publishable_key_live: key })
    .first('id', 'tenant_id');
}

export interface AppKeys {
  id: string;
  name: string;
  publishable_key_test: string;
  publishable_key_live: string;
}

/** The tenant's apps with their publishable keys, oldest first. Run inside withTenant. */
export async function listAppKeys(trx: Knex.Transaction): Promise<AppKeys[]> {
  return trx('apps')
    .orderBy('created_at')
    .select<AppKeys[]>('id', 'name', 'publishable_key_test', 'publishable_key_live');
}
