import { proxyActivities } from '@temporalio/workflow';
import { providerFailureOf } from './activity-failure';
import type { Activities } from '../activities';
import type { SyncTarget } from '../domain/providers';

const { stopSalesAt } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 5 },
});
const { deactivateProduct } = proxyActivities<Activities>({ startToCloseTimeout: '15 seconds' });

export interface RetireResult {
  retired: boolean;
  stopped_at: string[];
  refused: { provider: string; reason: string }[];
}

/**
 * `retire-<tenant>-<product id>`: stop sales at every live store first, then deactivate the row. If a
 * store refuses (or stays unreachable), the row stays active and the result says why, so the
 * product is never shown retired while a store still sells it.
 */
export async function retireProductWorkflow(input: {
  tenantId: string;
  productId: string;
  stores: SyncTarget[];
}): Promise<RetireResult> {
  const stopped: string[] = [];
  const refused: RetireResult['refused'] = [];
  await Promise.all(
    input.stores.map(async (target) => {
      try {
        if ((await stopSalesAt({ tenantId: input.tenantId, target, productId: input.productId })).stopped)
          stopped.push(target.provider);
      } catch (err) {
        refused.push({ provider: target.provider, reason: providerFailureOf(err).reason });
      }
    }),
  );
  if (refused.length) return { retired: false, stopped_at: stopped.sort(), refused };
  await deactivateProduct({ tenantId: input.tenantId, productId: input.productId });
  return { retired: true, stopped_at: stopped.sort(), refused };
}
