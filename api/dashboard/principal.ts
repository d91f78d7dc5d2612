import type Koa from 'koa';
import type { Principal } from '../auth';
import { SCOPES } from '../../domain/scopes';

/**
 * A signed-in person runs the API's read operations for their own tenant with every scope.
 * keyId names the user; it is only written to the audit trail by write operations, which
 * the dashboard does not run through this principal.
 */
export function dashboardPrincipal(ctx: Koa.Context): Principal {
  const user = ctx.state.user!;
  return { tenantId: user.tenant_id, keyId: `user:${user.id}`, keyName: 'dashboard', scopes: [...SCOPES], expiresAt: null };
}
