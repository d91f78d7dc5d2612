import type { Knex } from 'knex';
import { DEFAULT_SETTINGS, type ReconciliationSettings } from '../domain/reconciliation-schedule';

/** A tenant's reconciliation schedule settings, in the caller's tenant transaction. */

export interface StoredSettings extends ReconciliationSettings {
  /** Null: the tenant never changed the defaults. */
  updated_at: Date | null;
}

export async function reconciliationSettings(trx: Knex.Transaction): Promise<StoredSettings> {
  const row = await trx('reconciliation_settings').first(
    'enabled',
    'web_interval_minutes',
    'stores_interval_minutes',
    'updated_at',
  );
  return row ?? { ...DEFAULT_SETTINGS, updated_at: null };
}

/** The fields given change; the others keep what they were (or their default). One statement. */
export async function saveReconciliationSettings(
  trx: Knex.Transaction,
  tenantId: string,
  change: Partial<ReconciliationSettings>,
): Promise<StoredSettings> {
  const current = await reconciliationSettings(trx);
  const next = {
    enabled: change.enabled ?? current.enabled,
    web_interval_minutes: change.web_interval_minutes ?? current.web_interval_minutes,
    stores_interval_minutes: change.stores_interval_minutes ?? current.stores_interval_minutes,
  };
  const [row] = await trx('reconciliation_settings')
    .insert({ tenant_id: tenantId, ...next })
    .onConflict('tenant_id')
    .merge({ ...next, updated_at: trx.fn.now() })
    .returning(['enabled', 'web_interval_minutes', 'stores_interval_minutes', 'updated_at']);
  return row;
}

/**
 * Every tenant with an active, proven connection, and the providers of those connections: where
 * the reconciliation schedules belong. Read as the login role before any tenant is known, through
 * the columns and policy the webhook routing uses (migrations 015, 017): ids only.
 */
export async function provenProvidersOfAllTenants(db: Knex): Promise<Map<string, Set<string>>> {
  const rows = (await db('provider_connections')
    .where({ is_active: true })
    .whereNotNull('verified_at')
    .orderBy('tenant_id')
    .select('tenant_id', 'provider')) as { tenant_id: string; provider: string }[];
  const out = new Map<string, Set<string>>();
  for (const r of rows) out.set(r.tenant_id, (out.get(r.tenant_id) ?? new Set()).add(r.provider));
  return out;
}
