import type { Logger } from 'pino';
import { z } from 'zod';
import { withTenant } from '../db/tenant-tx';
import { readAsTenant } from '../db/tenant-read';
import type { Actor } from './actor';
import { auditActorOf } from './actor';
import { assertNoForbiddenFields, assertNoNulBytes, assertNoTenantInInput } from './input-rules';
import { invalidRequest, toApiError } from './errors';
import { refusalFor } from './policy';
import { dispositionOf } from './disposition';
import type { Services } from './services';
import { dashboardOnly, type Operation, type OperationContext, type Surface } from './types';
import { recordAudit } from '../db/audit';
import { operationDuration, operationRequests, secondsSince } from '../runtime/metrics';

export interface ExecutionMeta {
  requestId: string;
  services: Services;
  log: Logger;
  surface: Surface;
  /** The REST `Prefer` header, when there is one. */
  prefer?: string;
  /** Filled by the handler; the REST layer applies it. */
  response?: OperationContext['response'];
  /**
   * Turns what the caller sent into the operation's input (a tool names a product by
   * product_id or sku, the operation takes its id). Runs after the scope check and the body
   * rules: it may read the tenant's data, which a key without the scope must not probe.
   */
  resolveInput?: (ctx: OperationContext, input: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.join('.') : 'input';
  if (issue.code === 'unrecognized_keys')
    return `unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_value' && 'values' in issue)
    return `${where} must be one of ${(issue.values as unknown[]).join(', ')}`;
  return `${where}: ${issue.message}`;
}

/**
 * The one path every operation takes, whichever surface and actor called it: the policy (always
 * first), body rules, the surface's input resolution, validation, the disposition, the handler
 * in the tenant's context, and the audit record for writes (refusals included), named by the
 * operation and the actor.
 */
export async function executeOperation(
  op: Operation,
  actor: Actor,
  rawInput: Record<string, unknown>,
  meta: ExecutionMeta,
): Promise<unknown> {
  const ctx: OperationContext = {
    actor,
    tenantId: actor.tenantId,
    requestId: meta.requestId,
    services: meta.services,
    log: meta.log,
    tx: (work) => withTenant(meta.services.db, actor.tenantId, work),
    read: (work) => readAsTenant(meta.services.db, actor.tenantId, work),
    preferAsync: /(^|[,;\s])respond-async($|[,;\s])/i.test(meta.prefer ?? ''),
    response: meta.response ?? { headers: {} },
  };
  // A write a person approved names the change and that person beside the key that asked.
  const approved =
    (actor.kind === 'api_key' || actor.kind === 'assistant') && actor.approvedChange
      ? { change_id: actor.approvedChange.changeId, approved_by: actor.approvedChange.userId }
      : undefined;
  const audit = (outcome: string, detail?: Record<string, unknown>) =>
    op.write
      ? recordAudit(meta.services.db, {
          tenantId: actor.tenantId,
          actor: auditActorOf(actor),
          action: op.name,
          requestId: meta.requestId,
          outcome,
          surface: meta.surface,
          detail: approved ? { ...approved, ...(detail ?? {}) } : detail,
        })
      : Promise.resolve();
  const started = process.hrtime.bigint();
  const count = (code: string) => {
    operationRequests.inc({ operation: op.name, surface: meta.surface, code });
    operationDuration.observe({ operation: op.name, surface: meta.surface }, secondsSince(started));
  };
  try {
    const refusal = refusalFor(actor, op, meta.surface);
    if (refusal) throw refusal;
    // Secrets are entered only in the dashboard: an account operation (which the policy has just
    // admitted for a signed-in person there, and no one else) is where they go in.
    if (!dashboardOnly(op)) assertNoForbiddenFields(rawInput);
    assertNoNulBytes(rawInput);
    assertNoTenantInInput(rawInput);
    const input = meta.resolveInput ? await meta.resolveInput(ctx, rawInput) : rawInput;
    const parsed = op.input.safeParse(input);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const param = first?.path.length
        ? first.path.join('.')
        : first?.code === 'unrecognized_keys'
          ? first.keys[0]
          : undefined;
      const formText = first && first.path.length && first.code !== 'invalid_value' ? first.message : undefined;
      throw invalidRequest(parsed.error.issues.map(describeIssue).join('; '), param, formText);
    }
    // operations/disposition.ts decides; a new kind is handled here.
    if (
      dispositionOf(actor, op, meta.surface).kind === 'hold' &&
      (actor.kind === 'api_key' || actor.kind === 'assistant')
    ) {
      // Loaded when a write is first held: it brings the Temporal client, which a process that
      // never holds one (the admin CLI's key commands) should not pay for at start.
      const { holdWrite } = await import('./hold');
      const held = await holdWrite(ctx, op, actor, parsed.data as Record<string, unknown>, meta.surface);
      await audit('pending_approval', { id: held.id });
      count('pending_approval');
      return held;
    }
    const result = await op.handler(ctx, parsed.data);
    await audit('ok', summarize(result));
    count('ok');
    return result;
  } catch (err) {
    // The audit row (and the metric) records the very code the caller is answered with.
    const code = toApiError(err).code;
    count(code);
    await audit(code).catch((e) => meta.log.error({ err: e, request_id: meta.requestId }, 'audit write failed'));
    throw err;
  }
}

/** A few identifying fields of a write's result for the audit row (never whole payloads). */
export function summarize(result: unknown): Record<string, unknown> | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const r = result as Record<string, unknown>;
  const keep = [
    'id',
    'run_id',
    'sku',
    'name',
    'scopes',
    'ok',
    'synced',
    'created',
    'provider',
    'outcome',
    'replaced_claims',
    'revoked_keys',
    // An assistant's consent: which client, and the role it was given (docs/assistant-sign-in.md).
    'client_id',
    'role',
    // Whose assistant an owner or admin disconnected (assistants.disconnect).
    'member_id',
  ];
  const out: Record<string, unknown> = {};
  const isWordList = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  for (const k of keep) if (k in r && (typeof r[k] !== 'object' || r[k] === null || isWordList(r[k]))) out[k] = r[k];
  // A key whose writes wait for approval says so; the usual case (false) is left out.
  if (r.require_approval === true) out.require_approval = true;
  if (r.hold_writes === true) out.hold_writes = true;
  return Object.keys(out).length ? out : undefined;
}
