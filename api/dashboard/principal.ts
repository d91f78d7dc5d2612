import type Koa from 'koa';
import type { UserActor } from '../../operations/actor';

/**
 * The signed-in person as the actor of the operations they run: their own tenant, their role
 * (every member is an owner until roles arrive). Their writes are audited under their name.
 */
export function dashboardActor(ctx: Koa.Context): UserActor {
  const user = ctx.state.user!;
  return { kind: 'user', tenantId: user.tenant_id, userId: user.id, role: 'owner' };
}
