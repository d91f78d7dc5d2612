import type { AuditActor } from '../db/audit';
import type { Scope } from '../domain/scopes';
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

/** Who runs an operation. The policy (operations/policy.ts) and the audit trail both start here. */
export type Actor = KeyActor | UserActor;

export function auditActorOf(actor: Actor): AuditActor {
  return actor.kind === 'api_key' ? { kind: 'api_key', keyId: actor.keyId } : { kind: 'user', userId: actor.userId };
}

/** The actor as a short reference for records that name who asked (a sync run's `requested_by`). */
export function actorRef(actor: Actor): string {
  return actor.kind === 'api_key' ? actor.keyId : `user:${actor.userId}`;
}

/** The scopes the actor holds: a key's own, or those of a person's role. */
export function scopesOf(actor: Actor): Scope[] {
  return actor.kind === 'api_key' ? actor.scopes : scopesOfRole(actor.role);
}
