import { condition, defineSignal, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { expireGrant } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface GrantExpiryInput {
  tenantId: string;
  grantId: string;
  /** ISO time the grant ends. */
  expiresAt: string;
}

/** The grant was revoked: the timer has nothing left to do. Names the tenant, as every hand-over does. */
export const grantRevokedSignal = defineSignal<[{ tenantId: string }]>('revoked');

/**
 * One grant's durable timer (`grant-<tenant>-<grant>`, docs/support.md): it sleeps until the
 * grant's end and then expires it, surviving worker and server restarts. A revocation signals it
 * to stop early; a signal naming another tenant is refused. Ids only in its history.
 */
export async function grantExpiryWorkflow(input: GrantExpiryInput): Promise<string> {
  let revoked = false;
  setHandler(grantRevokedSignal, (s) => {
    if (s.tenantId !== input.tenantId) {
      log.warn('revocation for another tenant refused', { own: input.tenantId, named: s.tenantId });
      return;
    }
    revoked = true;
  });
  const wait = Math.max(0, Date.parse(input.expiresAt) - Date.now());
  if (await condition(() => revoked, wait)) return 'revoked';
  return expireGrant({ tenantId: input.tenantId, grantId: input.grantId });
}
