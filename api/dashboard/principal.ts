import type Koa from 'koa';
import type { Principal } from '../auth';
import { SCOPES } from '../../domain/scopes';

/**
 * A signed-in person runs the API's operations for their own tenant with every scope. A write
 * is audited as theirs (userId: a `user` actor, as every dashboard action is); keyId only
 * labels the principal.
 */
export function dashboardPrincipal(ctx: Koa.Context): Principal {
  const user = ctx.state.user!;
  return { tenantId: user.tenant_id, keyId: `user:${user.id}`, keyName: 'dashboard', scopes: [...SCOPES], expiresAt: null, userId: user.id };
}
