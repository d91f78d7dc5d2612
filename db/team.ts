import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { mayAssignRole, ROLES, type Role } from '../domain/roles';
import type { Tx } from './transaction';

/** Team members and invitations (docs/team.md). All but `invitationTenant` run in the tenant's transaction. */

export interface Member {
  id: string;
  email: string;
  role: Role;
  created_at: Date;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  expires_at: Date;
  created_at: Date;
}

/** Only this hash of an invitation link's token is stored. */
export function hashInvitationToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

export async function listMembers(trx: Tx): Promise<Member[]> {
  return trx('dashboard_users')
    .whereNull('removed_at')
    .orderBy('created_at')
    .select('id', 'email', 'role', 'created_at');
}

/**
 * The members, locked for the change about to be made: two owners demoting each other at once
 * must not both pass the "another owner remains" check.
 */
export async function lockMembers(trx: Tx): Promise<{ id: string; role: Role }[]> {
  return trx('dashboard_users').whereNull('removed_at').forUpdate().select('id', 'role');
}

export async function setMemberRole(trx: Tx, userId: string, role: Role): Promise<void> {
  await trx('dashboard_users').where({ id: userId }).update({ role, updated_at: trx.fn.now() });
}

/**
 * The member's row stays (the audit trail keeps naming them); their sessions and their pending
 * invitations go in the same transaction, so their next request is already signed out and no
 * link they kept lets them (or anyone) back in on their word.
 */
export async function removeMember(trx: Tx, userId: string): Promise<void> {
  await trx('dashboard_users').where({ id: userId }).update({ removed_at: trx.fn.now(), updated_at: trx.fn.now() });
  await trx('dashboard_sessions').where({ user_id: userId }).del();
  // Their assistants stop at once (a token is refused for a removed member in any case).
  await trx('assistant_grants').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
  await withdrawInvitationsBy(trx, userId, ROLES);
}

/** Withdraws the pending invitations a member made for these roles (they were removed, or may no longer give them). */
export async function withdrawInvitationsBy(trx: Tx, userId: string, roles: readonly Role[]): Promise<void> {
  if (roles.length === 0) return;
  await trx('team_invitations')
    .where({ invited_by: userId })
    .whereIn('role', roles)
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now(), updated_at: trx.fn.now() });
}

export async function listPendingInvitations(trx: Tx): Promise<PendingInvitation[]> {
  return trx('team_invitations')
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', trx.fn.now())
    .orderBy('created_at', 'desc')
    .select('id', 'email', 'role', 'expires_at', 'created_at');
}

export async function insertInvitation(
  trx: Tx,
  tenantId: string,
  i: { email: string; role: Role; tokenHash: string; invitedBy: string; expiresAt: Date },
): Promise<{ id: string; expires_at: Date }> {
  const [row] = await trx('team_invitations')
    .insert({
      tenant_id: tenantId,
      email: i.email,
      role: i.role,
      token_hash: i.tokenHash,
      invited_by: i.invitedBy,
      expires_at: i.expiresAt,
    })
    .returning(['id', 'expires_at']);
  return row;
}

export async function revokeInvitation(trx: Tx, id: string): Promise<{ id: string; email: string } | undefined> {
  const [row] = await trx('team_invitations')
    .where({ id })
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning(['id', 'email']);
  return row;
}

/** The tenant of a live invitation with this token (the login role may not read invitations: the schema). */
export async function invitationTenant(db: Knex, token: string): Promise<string | undefined> {
  const { rows } = await db.raw('select team_invitation_tenant(?) as tenant_id', [hashInvitationToken(token)]);
  return rows[0]?.tenant_id ?? undefined;
}

/**
 * A live invitation, read without using it (the accept page shows whom it is for), and whether
 * whoever made it may still give its role: a member still, in a role that may assign it.
 */
export async function findLiveInvitation(
  trx: Tx,
  token: string,
): Promise<{ id: string; email: string; role: Role; inviterMayGive: boolean } | undefined> {
  const inv: { id: string; email: string; role: Role; invited_by: string | null } | undefined = await trx(
    'team_invitations',
  )
    .where({ token_hash: hashInvitationToken(token) })
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', trx.fn.now())
    .first('id', 'email', 'role', 'invited_by');
  if (!inv) return undefined;
  const inviterMayGive = await inviterMayGiveRole(trx, inv.invited_by, inv.role);
  return { id: inv.id, email: inv.email, role: inv.role, inviterMayGive };
}

/**
 * Whether the inviter is still a member whose role may give `role` (domain/roles.ts). `lock`
 * holds their row until the transaction ends, so a removal or demotion running at the same time
 * waits for the acceptance, or the acceptance sees its result: never both half.
 */
async function inviterMayGiveRole(trx: Tx, inviterId: string | null, role: Role, lock = false): Promise<boolean> {
  if (!inviterId) return false;
  const q = trx('dashboard_users').where({ id: inviterId }).whereNull('removed_at');
  const inviter: { role: Role } | undefined = await (lock ? q.forShare() : q).first('role');
  return inviter !== undefined && mayAssignRole(inviter.role, role);
}

/** The invitation's maker was removed, or demoted to a role that may not give the invited one. */
export class InviterMayNotGiveRole extends Error {
  constructor() {
    super('whoever made this invitation may no longer give its role');
  }
}

/**
 * Uses the invitation (once: the update that marks it accepted is the check) and makes its
 * person a member with its role. A removed member of this tenant comes back with a new
 * password. An email with an account of its own elsewhere cannot join (one login, one tenant):
 * the invitation is used all the same and `'email_taken'` answered, so the holder's page can
 * be the one a new member gets (docs/team.md); that account is not touched.
 * The inviter must still be a member who may give the role (`InviterMayNotGiveRole`); their
 * row is locked before the invitation's, the order a removal or demotion takes them in.
 */
export async function acceptInvitation(
  trx: Tx,
  tenantId: string,
  token: string,
  passwordHash: string,
): Promise<{ id: string; tenant_id: string; email: string; role: Role } | 'email_taken' | undefined> {
  const found = await trx('team_invitations')
    .where({ token_hash: hashInvitationToken(token) })
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .first('role', 'invited_by');
  if (found && !(await inviterMayGiveRole(trx, found.invited_by, found.role, true))) throw new InviterMayNotGiveRole();
  const [inv] = await trx('team_invitations')
    .where({ token_hash: hashInvitationToken(token) })
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', trx.fn.now())
    .update({ accepted_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning(['id', 'email', 'role']);
  if (!inv) return undefined;
  const [returning] = await trx('dashboard_users')
    .where({ email: inv.email })
    .whereNotNull('removed_at')
    .update({ role: inv.role, removed_at: null, password_hash: passwordHash, updated_at: trx.fn.now() })
    .returning(['id', 'tenant_id', 'email', 'role']);
  let user = returning;
  if (!user) {
    try {
      // A savepoint: the email's unique index (other tenants' rows are out of sight here) refuses
      // the row without undoing the invitation's use.
      [user] = await trx.transaction((sp) =>
        sp('dashboard_users')
          .insert({ tenant_id: tenantId, email: inv.email, role: inv.role, password_hash: passwordHash })
          .returning(['id', 'tenant_id', 'email', 'role']),
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return 'email_taken';
      throw err;
    }
  }
  await trx('team_invitations').where({ id: inv.id }).update({ accepted_by: user.id });
  return user;
}

/** The emails of these people, removed members included: the audit trail names who did what. */
export async function memberEmails(trx: Tx, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows: { id: string; email: string }[] = await trx('dashboard_users').whereIn('id', ids).select('id', 'email');
  return new Map(rows.map((r) => [r.id, r.email]));
}
