import type Koa from 'koa';
import type { UserActor } from '../../operations/actor';

/**
 * The signed-in person as the actor of the operations they run: their own tenant and their role,
 * as this request's session read them (a role changed a moment ago holds already). Their writes
 * are audited under their name.
 */
export function dashboardActor(ctx: Koa.Context): UserActor {
  const user = ctx.state.user!;
  return { kind: 'user', tenantId: user.tenant_id, userId: user.id, role: user.role };
}
