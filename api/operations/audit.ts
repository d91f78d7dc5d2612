import type { Knex } from 'knex';
import { withTenant } from '../../db/tenant-tx';
import type { Principal } from '../auth';

/** One audit row per write attempt, in its own transaction so a rolled-back write is still recorded. */
export async function recordAudit(
  db: Knex,
  e: { principal: Principal; action: string; requestId: string; outcome: string; surface: 'rest' | 'tool'; detail?: Record<string, unknown> },
): Promise<void> {
  await withTenant(db, e.principal.tenantId, (trx) =>
    trx('audit_entries').insert({
      tenant_id: e.principal.tenantId,
      action: e.action,
      actor_type: 'api_key',
      actor_id: e.principal.keyId,
      request_id: e.requestId,
      outcome: e.outcome,
      detail: JSON.stringify({ surface: e.surface, ...(e.detail ?? {}) }),
    }),
  );
}
