import { z } from 'zod';
import { isUuid } from '../../domain/ids';
import { mayAssignRole, ROLES, type Role } from '../../domain/roles';
import { ApiError } from '../errors';
import { forbiddenForRole } from '../policy';
import type { OperationContext } from '../types';

/** How long an invitation link works (docs/team.md). */
export const INVITATION_TTL_DAYS = 7;

export const roleInput = z.enum(ROLES, { error: `Choose a role: ${ROLES.join(', ')}.` });

export const memberRow = z.object({
  id: z.string(),
  object: z.literal('team_member'),
  role: z.enum(ROLES),
});

/** A malformed id, a removed member and another tenant's member are the same refusal. */
export const noSuchMember = () => new ApiError(404, 'not_found', 'No such member.');
export const knownUserId = (v: string) => {
  if (!isUuid(v)) throw noSuchMember();
  return v;
};

export const lastOwner = () =>
  new ApiError(409, 'last_owner', 'The account needs at least one owner: make someone else an owner first.');

/** The person running a team operation may hand out (or take away) this role: only an owner touches owners. */
export function assertMayAssign(ctx: OperationContext, role: Role): void {
  if (ctx.actor.kind !== 'user' || !mayAssignRole(ctx.actor.role, role)) throw forbiddenForRole();
}
