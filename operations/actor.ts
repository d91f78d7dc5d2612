import type { AuditActor } from '../db/audit';
import { SCOPES, type Scope } from '../domain/scopes';
import { scopesOfRole, type Role } from '../domain/roles';

/** A secret key: on REST and on the tool server (an assistant's tool call is its key's). */
export interface KeyActor {
  kind: 'api_key';
  tenantId: string;
  keyId: string;
  keyName: string;
  scopes: Scope[];
  expiresAt: Date | null;
  /** Its writes wait for a person's approval (docs/approvals.md). */
  requireApproval?: boolean;
  /**
   * Set only when a person approved this key's held write and it runs now: the change and the
   * person, both named in the audit row. Such a write is never held again.
   */
  approvedChange?: { changeId: string; userId: string };
}

/** A signed-in person in the dashboard; what they may do is their role's (domain/roles.ts). */
export interface UserActor {
  kind: 'user';
  tenantId: string;
  userId: string;
  role: Role;
}

/**
 * An assistant a person connected (docs/assistant-sign-in.md): "assistant <client> on behalf of
 * <person>", on the tool server only. What it may do is read with each request: the scopes of the
 * role the person gave it, within the person's current role.
 */
export interface AssistantActor {
  kind: 'assistant';
  tenantId: string;
  /** The person's consent (`assistant_grants.id`). */
  assistantId: string;
  clientName: string;
  userId: string;
  scopes: Scope[];
  /** The person chose "writes wait for approval" (docs/approvals.md). */
  holdWrites: boolean;
  /** Set only when a person approved this assistant's held write and it runs now (as for a key). */
  approvedChange?: { changeId: string; userId: string };
}

/**
 * Whoever runs the installation, through the admin CLI (scripts/admin.ts) on the tenant a command
 * names: audited as `operator`. No request of the API, the dashboard or the tool server is one.
 */
export interface OperatorActor {
  kind: 'operator';
  tenantId: string;
}

/** Who runs an operation. The policy (operations/policy.ts) and the audit trail both start here. */
export type Actor = KeyActor | UserActor | OperatorActor | AssistantActor;

export function auditActorOf(actor: Actor): AuditActor {
  if (actor.kind === 'operator') return { kind: 'operator' };
  if (actor.kind === 'assistant')
    return { kind: 'assistant', assistantId: actor.assistantId, clientName: actor.clientName, userId: actor.userId };
  return actor.kind === 'api_key' ? { kind: 'api_key', keyId: actor.keyId } : { kind: 'user', userId: actor.userId };
}

/** The actor as a short reference for records that name who asked (a sync run's `requested_by`). */
export function actorRef(actor: Actor): string {
  if (actor.kind === 'operator') return 'operator';
  if (actor.kind === 'assistant') return `assistant:${actor.assistantId}`;
  return actor.kind === 'api_key' ? actor.keyId : `user:${actor.userId}`;
}

/** The scopes the actor holds: a key's own, those of a person's role, or every one for the operator. */
export function scopesOf(actor: Actor): Scope[] {
  if (actor.kind === 'operator') return [...SCOPES];
  if (actor.kind === 'assistant') return actor.scopes;
  return actor.kind === 'api_key' ? actor.scopes : scopesOfRole(actor.role);
}
