import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Mode } from '../domain/providers';
import type { RegistrationRefusal } from '../domain/store-purchase';
import { storeUnavailable } from './activity-failure';

// The client waits on it, as on a registration: a store that stays down is answered 503 after a few tries.
const { readCustomerPurchases } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '300 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 3 },
});

export interface AppReceiptPurchasesInput {
  tenantId: string;
  /** The app's App Store connection. */
  connectionId: string;
  /** The key's mode: a test key reads the Sandbox, a live one Production. */
  mode: Mode;
  /** The transaction id a StoreKit 1 app receipt names (the receipt itself is never trusted, nor kept). */
  transactionId: string;
}

export type AppReceiptPurchasesResult =
  { ok: true; purchases: string[]; more: boolean } | ({ ok: false } & RegistrationRefusal);

/**
 * The purchases a StoreKit 1 app receipt stands for (`app-receipt-<tenant>-<hash of tenant and
 * transaction id>`): the distinct purchases of the customer who made the receipt's transaction,
 * newest first and bounded (domain/app-receipt.ts), read from the App Store's transaction history.
 * Each is then registered on its own, as any store purchase (api/revenuecat/app-receipt.ts).
 */
export async function appReceiptPurchasesWorkflow(input: AppReceiptPurchasesInput): Promise<AppReceiptPurchasesResult> {
  try {
    const got = await readCustomerPurchases(input);
    return got.ok ? { ok: true, purchases: got.purchases, more: got.more } : { ok: false, ...got.refusal };
  } catch (err) {
    return storeUnavailable(err);
  }
}
