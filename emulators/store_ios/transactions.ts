import crypto from 'node:crypto';
import { deviceAppAccountToken } from './app-account-token';
import type { EmulatorStore } from '../common/types';
import type { IosAccount, Mode } from './accounts';
import { subscriptionByProductId, subscriptionPriceIn } from './connect-api';
import { signJws, type Chain } from './pki';

/**
 * Auto-renewable subscription purchases as the App Store Server API sees them: every
 * purchase or renewal is a transaction (JWSTransaction fields), chained by
 * originalTransactionId; each chain has one renewal state (JWSRenewalInfo fields plus the
 * subscription status 1–5). Sandbox transactions are reached with the account's test key,
 * Production ones with its live key. Periods are real lengths, not Apple's accelerated
 * sandbox clock, so a test purchase stays active while tests and demos look at it.
 */
export type Environment = 'Sandbox' | 'Production';

export const STATUS = { ACTIVE: 1, EXPIRED: 2, BILLING_RETRY: 3, GRACE_PERIOD: 4, REVOKED: 5 } as const;

export interface Transaction extends Record<string, unknown> {
  account: string;
  transactionId: string;
  originalTransactionId: string;
  webOrderLineItemId: string;
  bundleId: string;
  productId: string;
  subscriptionGroupIdentifier: string;
  purchaseDate: number;
  originalPurchaseDate: number;
  expiresDate: number;
  quantity: number;
  type: 'Auto-Renewable Subscription' | 'Non-Consumable';
  appAccountToken?: string;
  /**
   * The Apple Account that bought it, the emulator's stand-in for the customer Apple knows (never
   * signed, as Apple never names it): Get Transaction History answers a customer's purchases, and
   * a device's app receipt holds them.
   */
  customer: string;
  inAppOwnershipType: 'PURCHASED' | 'FAMILY_SHARED';
  environment: Environment;
  transactionReason: 'PURCHASE' | 'RENEWAL';
  storefront: string;
  storefrontId: string;
  price: number; // milli-units, as Apple reports it
  currency: string;
  revocationDate?: number;
  revocationReason?: number;
  offerType?: number;
  offerDiscountType?: string;
}

export interface RenewalState extends Record<string, unknown> {
  account: string;
  environment: Environment;
  originalTransactionId: string;
  latestTransactionId: string;
  productId: string;
  autoRenewProductId: string;
  autoRenewStatus: 0 | 1;
  status: number;
  isInBillingRetryPeriod: boolean;
  gracePeriodExpiresDate?: number;
  expirationIntent?: number;
  appAccountToken?: string;
  recentSubscriptionStartDate: number;
  /** A family member's chain: the purchaser's original transaction id (Family Sharing). */
  familyOf?: string;
}

export const modeOf = (env: Environment): Mode => (env === 'Sandbox' ? 'test' : 'live');

const DAY = 86_400_000;
// Apple's billing grace period (the 16-day option).
const GRACE_MS = 16 * DAY;

function addPeriod(from: number, period: string | null | undefined): number {
  const d = new Date(from);
  const months = { ONE_MONTH: 1, TWO_MONTHS: 2, THREE_MONTHS: 3, SIX_MONTHS: 6, ONE_YEAR: 12 }[period ?? 'ONE_MONTH'];
  if (period === 'ONE_WEEK') return from + 7 * DAY;
  d.setUTCMonth(d.getUTCMonth() + (months ?? 1));
  return d.getTime();
}

function newTransactionId(store: EmulatorStore, env: Environment): string {
  for (;;) {
    const id = `${env === 'Sandbox' ? '2' : '1'}000000${String(crypto.randomInt(100_000_000, 999_999_999))}`;
    if (!store.find('transactions', (t) => t.transactionId === id)) return id;
  }
}

function catalogue(store: EmulatorStore, account: IosAccount, env: Environment, productId: string) {
  const sub = subscriptionByProductId(store, account.account, modeOf(env), productId);
  const usd = sub ? subscriptionPriceIn(store, sub, 'USA') : undefined;
  return {
    period: sub?.subscriptionPeriod ?? 'ONE_MONTH',
    groupId:
      sub?.group_id ??
      `2${crypto.createHash('sha1').update(`${account.account}/${productId}`).digest('hex').replace(/\D/g, '').slice(0, 7).padEnd(7, '0')}`,
    priceMilli: usd ? usd.minor * 10 : 9990,
  };
}

export function transactions(store: EmulatorStore): Transaction[] {
  return store.list('transactions') as Transaction[];
}

export function renewalStates(store: EmulatorStore): RenewalState[] {
  return store.list('subscription_states') as RenewalState[];
}

export function findTransaction(
  store: EmulatorStore,
  account: string,
  env: Environment,
  id: string,
): Transaction | undefined {
  return transactions(store).find((t) => t.account === account && t.environment === env && t.transactionId === id);
}

export function chainOf(store: EmulatorStore, tx: Transaction): { state: RenewalState; latest: Transaction } {
  const state = renewalStates(store).find(
    (s) => s.account === tx.account && s.originalTransactionId === tx.originalTransactionId,
  )!;
  const latest = transactions(store).find(
    (t) => t.account === tx.account && t.transactionId === state.latestTransactionId,
  )!;
  return { state, latest };
}

/** A customer buys a subscription (a device's StoreKit purchase, or SUBSCRIBED/INITIAL_BUY). */
export function purchase(
  store: EmulatorStore,
  account: IosAccount,
  env: Environment,
  productId: string,
  appUserId?: string,
  customer?: string,
): { state: RenewalState; latest: Transaction } {
  const now = Date.now();
  const info = catalogue(store, account, env, productId);
  const id = newTransactionId(store, env);
  // The app derived the token when it bought (StoreKit's purchase option); the store only keeps it.
  const token = appUserId ? deviceAppAccountToken(appUserId) : undefined;
  const tx = store.insert<Transaction>('transactions', {
    ...firstPurchase(account, env, id, productId, now, token, customer),
    webOrderLineItemId: newTransactionId(store, env),
    subscriptionGroupIdentifier: info.groupId,
    expiresDate: addPeriod(now, info.period),
    type: 'Auto-Renewable Subscription',
    price: info.priceMilli,
  });
  const state = store.insert<RenewalState>('subscription_states', {
    account: account.account,
    environment: env,
    originalTransactionId: id,
    latestTransactionId: id,
    productId,
    autoRenewProductId: productId,
    autoRenewStatus: 1,
    status: STATUS.ACTIVE,
    isInBillingRetryPeriod: false,
    ...(token ? { appAccountToken: token } : {}),
    recentSubscriptionStartDate: now,
  });
  return { state, latest: tx };
}

/** A customer of their own: a purchase made without naming one is the only one of its Apple Account. */
const newCustomer = () => `customer-${crypto.randomUUID()}`;

/** What every first transaction of a purchase says, whatever its product type (the US storefront, in dollars). */
function firstPurchase(
  account: IosAccount,
  env: Environment,
  id: string,
  productId: string,
  now: number,
  token: string | undefined,
  customer: string | undefined,
) {
  return {
    account: account.account,
    transactionId: id,
    originalTransactionId: id,
    bundleId: account.bundle_id,
    productId,
    purchaseDate: now,
    originalPurchaseDate: now,
    quantity: 1,
    ...(token ? { appAccountToken: token } : {}),
    customer: customer ?? newCustomer(),
    inAppOwnershipType: 'PURCHASED' as const,
    environment: env,
    transactionReason: 'PURCHASE' as const,
    storefront: 'USA',
    storefrontId: '143441',
    currency: 'USD',
  };
}

/**
 * A customer buys a non-consumable (lifetime) in-app purchase: one transaction, no expiry, no
 * subscription group and no renewal state.
 */
export function purchaseNonConsumable(
  store: EmulatorStore,
  account: IosAccount,
  env: Environment,
  productId: string,
  appUserId?: string,
  customer?: string,
): Transaction {
  const now = Date.now();
  const id = newTransactionId(store, env);
  const token = appUserId ? deviceAppAccountToken(appUserId) : undefined;
  const tx = store.insert<Transaction>('transactions', {
    ...firstPurchase(account, env, id, productId, now, token, customer),
    type: 'Non-Consumable',
    price: 4990,
  } as unknown as Transaction);
  // Apple's transactions of a non-consumable carry neither of these (the insert's row type has them for subscriptions).
  delete (tx as Partial<Transaction>).expiresDate;
  delete (tx as Partial<Transaction>).webOrderLineItemId;
  store.save();
  return tx;
}

/** The next period's transaction in the same chain (renewal, billing recovery or resubscribe). */
function renewal(
  store: EmulatorStore,
  account: IosAccount,
  chain: { state: RenewalState; latest: Transaction },
  reason: 'RENEWAL' | 'PURCHASE',
): Transaction {
  const { state, latest } = chain;
  const now = Date.now();
  const start = reason === 'PURCHASE' || state.status !== STATUS.ACTIVE ? now : Math.max(now, latest.expiresDate);
  const productId = state.autoRenewProductId;
  const info = catalogue(store, account, latest.environment, productId);
  const tx = store.insert<Transaction>('transactions', {
    ...latest,
    transactionId: newTransactionId(store, latest.environment),
    webOrderLineItemId: newTransactionId(store, latest.environment),
    productId,
    purchaseDate: start,
    expiresDate: addPeriod(start, info.period),
    transactionReason: reason,
    price: info.priceMilli,
    revocationDate: undefined,
    revocationReason: undefined,
    offerType: undefined,
    offerDiscountType: undefined,
  });
  for (const k of ['revocationDate', 'revocationReason', 'offerType', 'offerDiscountType'] as const) delete tx[k];
  Object.assign(state, {
    latestTransactionId: tx.transactionId,
    productId,
    status: STATUS.ACTIVE,
    isInBillingRetryPeriod: false,
    autoRenewStatus: 1,
  });
  delete state.gracePeriodExpiresDate;
  delete state.expirationIntent;
  if (reason === 'PURCHASE') state.recentSubscriptionStartDate = start;
  return tx;
}

const EXPIRATION_INTENT: Record<string, number> = {
  VOLUNTARY: 1,
  BILLING_RETRY: 2,
  PRICE_INCREASE: 3,
  PRODUCT_NOT_FOR_SALE: 4,
};

/**
 * Move a chain the way the App Store would have before sending `type`/`subtype`, so the
 * notification and later Server API lookups agree. Unknown or informational types change nothing.
 */
export function applyNotification(
  store: EmulatorStore,
  account: IosAccount,
  chain: { state: RenewalState; latest: Transaction },
  type: string,
  subtype?: string,
  productId?: string,
): void {
  const { state } = chain;
  const now = Date.now();
  const latest = () =>
    transactions(store).find((t) => t.account === state.account && t.transactionId === state.latestTransactionId)!;
  switch (type) {
    case 'SUBSCRIBED':
      if (subtype === 'RESUBSCRIBE') renewal(store, account, chain, 'PURCHASE');
      break;
    case 'DID_RENEW':
      renewal(store, account, { state, latest: latest() }, 'RENEWAL');
      break;
    case 'DID_FAIL_TO_RENEW': {
      const tx = latest();
      tx.expiresDate = Math.min(tx.expiresDate, now); // the renewal date has come and the charge failed
      state.isInBillingRetryPeriod = true;
      state.status = subtype === 'GRACE_PERIOD' ? STATUS.GRACE_PERIOD : STATUS.BILLING_RETRY;
      if (subtype === 'GRACE_PERIOD') state.gracePeriodExpiresDate = tx.expiresDate + GRACE_MS;
      break;
    }
    case 'GRACE_PERIOD_EXPIRED':
      state.status = STATUS.BILLING_RETRY;
      delete state.gracePeriodExpiresDate;
      break;
    case 'EXPIRED': {
      const tx = latest();
      tx.expiresDate = Math.min(tx.expiresDate, now);
      state.status = STATUS.EXPIRED;
      state.autoRenewStatus = 0;
      state.isInBillingRetryPeriod = false;
      state.expirationIntent = EXPIRATION_INTENT[subtype ?? 'VOLUNTARY'] ?? 1;
      delete state.gracePeriodExpiresDate;
      break;
    }
    case 'REFUND':
    case 'REVOKE': {
      const tx = latest();
      tx.revocationDate = now;
      tx.revocationReason = type === 'REFUND' ? 0 : 1;
      state.status = STATUS.REVOKED;
      state.autoRenewStatus = 0;
      break;
    }
    case 'DID_CHANGE_RENEWAL_STATUS':
      state.autoRenewStatus = subtype === 'AUTO_RENEW_ENABLED' ? 1 : 0;
      break;
    case 'DID_CHANGE_RENEWAL_PREF':
      // UPGRADE takes effect at once (a new transaction for the new product, refunding the rest of the
      // old period); DOWNGRADE (and a crossgrade of another duration) from the next renewal; no subtype
      // reverts to the current product.
      state.autoRenewProductId = productId ?? state.productId;
      if (subtype === 'UPGRADE') renewal(store, account, { state, latest: latest() }, 'PURCHASE');
      break;
    default:
      break;
  }
  store.save();
}

function strip<T extends Record<string, unknown>>(o: T, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k, v]) => !keys.includes(k) && v !== undefined));
}

export function signedTransaction(pki: Chain, tx: Transaction, overrides: Record<string, unknown> = {}): string {
  return signJws(pki, { ...strip(tx, 'account', 'customer'), ...overrides, signedDate: Date.now() });
}

export function signedRenewal(
  pki: Chain,
  state: RenewalState,
  latest: Transaction,
  overrides: Record<string, unknown> = {},
): string {
  return signJws(pki, {
    ...strip(state, 'account', 'latestTransactionId', 'status', 'isInBillingRetryPeriod', 'familyOf'),
    isInBillingRetryPeriod: state.isInBillingRetryPeriod,
    renewalDate: latest.expiresDate,
    renewalPrice: latest.price,
    currency: latest.currency,
    ...overrides,
    signedDate: Date.now(),
  });
}

/**
 * Family Sharing: a family member's access to a purchaser's subscription is its own chain (its
 * own original transaction id, `inAppOwnershipType` FAMILY_SHARED, no appAccountToken: that is
 * the purchaser's), following the purchaser's.
 */
export function shareWithFamily(
  store: EmulatorStore,
  purchaser: { state: RenewalState; latest: Transaction },
): { state: RenewalState; latest: Transaction } {
  const env = purchaser.latest.environment;
  const id = newTransactionId(store, env);
  const { appAccountToken: _a, ...shared } = purchaser.latest;
  const tx = store.insert<Transaction>('transactions', {
    ...shared,
    transactionId: id,
    originalTransactionId: id,
    webOrderLineItemId: newTransactionId(store, env),
    inAppOwnershipType: 'FAMILY_SHARED',
    // A family member is an Apple Account of their own.
    customer: newCustomer(),
    purchaseDate: Date.now(),
    originalPurchaseDate: Date.now(),
  });
  const { appAccountToken: _b, ...stateRest } = purchaser.state;
  const state = store.insert<RenewalState>('subscription_states', {
    ...stateRest,
    originalTransactionId: id,
    latestTransactionId: id,
    familyOf: purchaser.state.originalTransactionId,
  });
  return { state, latest: tx };
}

/** The family members' chains sharing a purchaser's subscription. */
export function familyChains(
  store: EmulatorStore,
  purchaser: RenewalState,
): { state: RenewalState; latest: Transaction }[] {
  return renewalStates(store)
    .filter((s) => s.account === purchaser.account && s.familyOf === purchaser.originalTransactionId)
    .map((state) => ({
      state,
      latest: transactions(store).find(
        (t) => t.account === state.account && t.transactionId === state.latestTransactionId,
      )!,
    }));
}
