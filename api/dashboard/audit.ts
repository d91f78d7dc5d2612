import type { Knex } from 'knex';
import { withTenant } from '../../db/tenant-tx';

/**
 * Every dashboard action is audited as the person who did it (`actor_type` `user`). Written in
 * its own tenant transaction so a refused or failed action is recorded too; outcome is 'ok' or an
 * error code, as for API writes. Detail never
 * carries a secret: callers pass names and ids only.
 */
export async function recordUserAudit(
  db: Knex,
  e: { tenantId: string; userId: string; action: string; requestId: string; outcome: string; detail?: Record<string, unknown> },
): Promise<void> {
  await withTenant(db, e.tenantId, (trx) =>
    trx('audit_entries').insert({
      tenant_id: e.tenantId,
      action: e.action,
      actor_type: 'user',
      actor_id: e.userId,
      request_id: e.requestId,
      outcome: e.outcome,
      detail: JSON.stringify({ surface: 'dashboard', ...(e.detail ?? {}) }),
    }),
  );
}
