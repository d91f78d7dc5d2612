import os from 'node:os';
import type { Knex } from 'knex';

/**
 * What an operator did through the admin CLI, in the tenant's own audit trail
 * (`actor_type` `operator`, the OS user as the actor). Never a key value or a secret.
 */
export async function recordOperatorAudit(
  db: Knex,
  e: { tenantId: string; action: string; outcome?: string; detail?: Record<string, unknown> },
): Promise<void> {
  await db('audit_entries').insert({
    tenant_id: e.tenantId,
    action: e.action,
    actor_type: 'operator',
    actor_id: operatorName(),
    outcome: e.outcome ?? 'ok',
    detail: e.detail ? JSON.stringify(e.detail) : null,
  });
}

function operatorName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'operator';
  }
}
