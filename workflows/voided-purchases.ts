import { continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { VOIDED_SWEEP, voidedSweepSince } from '../domain/store-purchase';

const { listVoidedStorePurchases, reconcileStorePurchase } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
});
// A void's re-read: a few tries, then the next round lists it again (the cursor does not pass it).
const { readStorePurchase } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export interface VoidedPurchasesInput {
  tenantId: string;
  connectionId: string;
  /** The latest void time already handled (ms); carried across continue-as-new. */
  cursorMs?: number | null;
}

/**
 * `voided-purchases-<tenant>-<connection>`: one sweep per Play connection (the api start and a new proof both start
 * it).
 */
export const voidedPurchasesWorkflowId = (tenantId: string, connectionId: string) =>
  `voided-purchases-${tenantId}-${connectionId}`;

/** Rounds per run before continue-as-new keeps the history short (a day at the default pace). */
const ROUNDS_PER_RUN = 24;

/**
 * `voided-purchases-<tenant>-<connection>`: Play's Voided Purchases API, swept every hour for one
 * Play connection (started with the api process for every Play connection). Each voided purchase
 * is re-read and written with the "refunded" hint, so a refund or chargeback whose RTDN was lost
 * still revokes (domain/store-purchase.ts `voidedSweepSince`, docs/lifecycles.md).
 */
export async function voidedPurchasesWorkflow(input: VoidedPurchasesInput): Promise<void> {
  let cursor = input.cursorMs ?? null;
  const base = { tenantId: input.tenantId, provider: 'store_android' as const };
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    let failed = false;
    try {
      const page = await listVoidedStorePurchases({
        ...base,
        connectionId: input.connectionId,
        sinceMs: voidedSweepSince(cursor, Date.now()),
        max: VOIDED_SWEEP.maxPerRound,
      });
      for (const purchase of page.purchases) {
        try {
          const got = await readStorePurchase({ ...base, connectionId: input.connectionId, mode: null, purchase });
          if (got.ok)
            await reconcileStorePurchase({ ...base, read: got.read, owner: null, hint: 'refunded', eventIds: [] });
        } catch (err) {
          failed = true;
          log.warn('a voided purchase could not be re-read; the next round lists it again', {
            key: purchase.key,
            error: String((err as Error).message),
          });
        }
      }
      // The cursor moves only past a round whose every void was written.
      if (!failed && page.cursorMs !== null) cursor = page.cursorMs;
    } catch (err) {
      log.warn('the Voided Purchases API could not be read; retried next round', {
        error: String((err as Error).message),
      });
    }
    await sleep(`${VOIDED_SWEEP.everyMinutes} minutes`);
  }
  await continueAsNew<typeof voidedPurchasesWorkflow>({ ...input, cursorMs: cursor });
}
