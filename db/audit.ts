import os from 'node:os';
import type { Knex } from 'knex';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import { withTenant } from './tenant-tx';

/**
 * Who did it. Every write through the API is an `api_key` (the key id); every dashboard action
 * a `user` (the person); every admin CLI action an `operator` (the OS user running it).
 */
export type AuditActor =
  | { kind: 'api_key'; keyId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'operator' }
  /** An assistant a person connected: the row names the assistant and the person it acts for. */
  | { kind: 'assistant'; assistantId: string; clientName: string; userId: string };

export interface AuditRecord {
  tenantId: string;
  actor: AuditActor;
  action: string;
  /** 'ok' or the error code the caller was answered with. */
  outcome?: string;
  requestId?: string;
  /** Where it came from (`rest`, `tool`, `dashboard`); the CLI names none. */
  surface?: string;
  /** Names and ids only: never a key value or a secret. */
  detail?: Record<string, unknown>;
}

/**
 * The one audit writer. Its own tenant transaction, so a write that failed or was refused (and
 * rolled back) is still recorded.
 */
export async function recordAudit(db: Knex, e: AuditRecord): Promise<void> {
  const onBehalf =
    e.actor.kind === 'assistant' ? { assistant: e.actor.clientName, on_behalf_of: e.actor.userId } : undefined;
  const base = onBehalf ? { ...onBehalf, ...(e.detail ?? {}) } : e.detail;
  const detail = e.surface === undefined ? base : { surface: e.surface, ...(base ?? {}) };
  await withTenant(db, e.tenantId, (trx) =>
    trx('audit_entries').insert({
      tenant_id: e.tenantId,
      action: e.action,
      actor_type: e.actor.kind,
      actor_id: actorId(e.actor),
      request_id: e.requestId ?? null,
      outcome: e.outcome ?? 'ok',
      detail: detail ? JSON.stringify(detail) : null,
    }),
  );
}

function actorId(a: AuditActor): string {
  if (a.kind === 'api_key') return a.keyId;
  if (a.kind === 'user') return a.userId;
  if (a.kind === 'assistant') return a.assistantId;
  try {
    return os.userInfo().username;
  } catch {
    return 'operator';
  }
}

/** A dashboard action, as the signed-in person who did it. */
export function recordUserAudit(
  db: Knex,
  e: {
    tenantId: string;
    userId: string;
    action: string;
    requestId: string;
    outcome: string;
    detail?: Record<string, unknown>;
  },
): Promise<void> {
  return recordAudit(db, {
    tenantId: e.tenantId,
    actor: { kind: 'user', userId: e.userId },
    action: e.action,
    requestId: e.requestId,
    outcome: e.outcome,
    surface: 'dashboard',
    detail: e.detail,
  });
}

/** An admin CLI action, as the operator running it. */
export function recordOperatorAudit(
  db: Knex,
  e: { tenantId: string; action: string; outcome?: string; detail?: Record<string, unknown> },
): Promise<void> {
  return recordAudit(db, {
    tenantId: e.tenantId,
    actor: { kind: 'operator' },
    action: e.action,
    outcome: e.outcome,
    detail: e.detail,
  });
}

/** The audit trail as GET /v1/audit pages it. */
export function auditPage(
  src: PageSource,
  filters: { action?: string; actor_type?: string },
  page: PageRequest,
): Promise<RowPage> {
  return pageFromSql(
    src,
    { table: 'audit_entries', columns: 'audit_entries.*', from: 'audit_entries', filters },
    page,
    rows,
  );
}
