import crypto from 'node:crypto';
import type Koa from 'koa';
import { reserveAttempt } from '../../db/login-attempts';
import { clientAddressKey } from '../../domain/client-address-key';
import type { Services } from '../../operations/services';

/**
 * Dynamic client registration is open to anyone, so it is counted per client address (IPv6 by
 * its /64, docs/limits.md) with the sign-up allowance: each registration writes a row.
 */
export async function registrationAllowed(services: Services, ctx: Koa.Context): Promise<boolean> {
  const key = crypto.createHash('sha256').update(clientAddressKey(ctx.ip)).digest('hex');
  const reserved = await reserveAttempt(services.db, services.config.dashboardLimits, [
    { kind: 'signup', key: `oauth-register:${key}` },
  ]);
  return reserved.ok;
}
