import type { BillingError } from './errors.js';

export const PLATFORMS = ['web', 'desktop', 'ios', 'macos', 'android'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** What the app knows about the thing being bought. */
export interface CheckoutProduct {
  kind: 'digital' | 'physical';
  android_store_product_id?: string | null;
  /** The App Store product id: with it (and `storeBilling`), iOS and macOS sell digital products through StoreKit. */
  ios_store_product_id?: string | null;
}

/** Milliseconds since the epoch; injectable so tests drive time. */
export interface Clock {
  now(): number;
}

/** `localStorage` fits this shape; so does an async store (React Native AsyncStorage). */
export interface BillingStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** A purchase completed by Play Billing (Android). */
export interface AndroidStorePurchase {
  purchaseToken: string;
  productId: string;
  orderId?: string;
}

/** A purchase completed by StoreKit 2 (iOS, macOS): the transaction's `jwsRepresentation`. */
export interface IosStorePurchase {
  signedTransaction: string;
  productId: string;
}

/** A purchase completed by the platform's store billing library. */
export type StorePurchase = AndroidStorePurchase | IosStorePurchase;

/**
 * The store billing module, loaded by the app: Play Billing on Android, StoreKit on iOS and
 * macOS. `activity` is Android's foreground activity the purchase sheet attaches to (without it
 * the SDK fails closed); iOS ignores it. `appAccountToken` (iOS) is the UUID the SDK derives from
 * the app user id: (set on the iOS lane only) pass it to StoreKit's `purchase(options: [.appAccountToken(…)])` so the
 * service can tell the buyer. `purchase` resolves with the purchase, or null when the user
 * cancelled.
 */
export interface StoreBilling {
  activity?: unknown;
  purchase(args: { productId: string; activity: unknown; appAccountToken?: string }): Promise<StorePurchase | null>;
}

/**
 * Opens the provider-hosted checkout: a new tab on the web, an in-app browser tab on
 * mobile. It may resolve when the tab closes; with `waitForPremium` it must (the wait starts
 * then), and without it the app calls `refresh()` when the tab closes.
 */
export type OpenCheckout = (url: string) => void | Promise<void>;

/** `checkout({ …, waitForPremium })`: after the checkout tab closes, wait for the purchase to show. */
export interface WaitOptions {
  /** How long the service may hold the wait, at most 20 000 ms (the service's bound). Default 20 000. */
  timeoutMs?: number;
}

export interface BillingOptions {
  publishableKey: string;
  /** The API host, e.g. `https://billing.example.com` (the SDK adds `/v1/sdk/...`). */
  backend: string;
  appUserId: string;
  platform: Platform;
  storage?: BillingStorage;
  openCheckout?: OpenCheckout;
  storeBilling?: StoreBilling;
  clock?: Clock;
  /** Defaults to the platform's global fetch. */
  fetch?: typeof fetch;
  /** Forced refreshes closer together than this share one request. Default 10 000 ms. */
  refreshWindowMs?: number;
  /** Where the re-initialisation warning goes. Default `console.warn`. */
  warn?: (message: string) => void;
}

/** One entitlement as the service reports it. */
export interface Entitlement {
  id?: string;
  app_user_id?: string;
  provider?: string;
  state: string;
  is_active: boolean;
  product_id?: string | null;
  sku?: string | null;
  /**
   * What it unlocks, as the catalogue names it (the product's `entitlement`; `premium` when the
   * product names none): `entitlements.filter((e) => e.is_active).map((e) => e.identifier)`.
   */
  identifier?: string;
  expires_at?: string | null;
  grace_until?: string | null;
  [field: string]: unknown;
}

/** The full cache-first answer. `stale` is true when the service could not be reached. */
export interface EntitlementsAnswer {
  appUserId: string;
  isPremium: boolean;
  entitlements: Entitlement[];
  /** When the service produced this answer (ms since epoch, by the SDK's clock). */
  fetchedAt: number;
  /** When the SDK will next ask the service (ms since epoch). */
  expiresAt: number;
  cacheTtlSeconds: number;
  stale: boolean;
  /**
   * True when the answer agrees with a kept entitlement token whose signature this platform checked
   * (`entitlementToken()` keeps one); false when no token is kept or WebCrypto has no Ed25519.
   * A kept token that does not verify, or disagrees, makes the SDK refuse the cached answer.
   */
  verified: boolean;
}

export interface PaywallAnswer {
  paywall: Record<string, unknown>;
  fetchedAt: number;
  expiresAt: number;
  stale: boolean;
}

export type CheckoutResult =
  /** The checkout tab closed and the purchase shows (only with `waitForPremium`). */
  | { state: 'purchased'; lane: 'web'; url: string; entitlements: EntitlementsAnswer }
  /**
   * The tab opened; with `waitForPremium`, it closed and no purchase showed within the wait (`entitlements` says what
   * is true).
   */
  | { state: 'opened'; lane: 'web'; url: string; entitlements?: EntitlementsAnswer }
  | { state: 'purchased'; lane: 'store'; purchase: StorePurchase; entitlements: EntitlementsAnswer }
  /**
   * The store sold it, but the purchase was another app user's and the app's restore policy asks a
   * person to approve the move (see `RestoreResult`); the other account keeps access until then.
   */
  | {
      state: 'pending_review';
      lane: 'store';
      purchase: StorePurchase;
      transferId: string;
      entitlements: EntitlementsAnswer;
    }
  | { state: 'cancelled'; lane: 'store' }
  | { state: 'error'; lane: 'web' | 'store' | 'blocked'; reason: string; error: BillingError };

/** A purchase the store already has, to restore for this app user (`restore()`). */
export type RestorablePurchase =
  ({ provider: 'store_android' } & AndroidStorePurchase) | { provider: 'store_ios'; signedTransaction: string };

/**
 * What `restore()` came to. `restored`: this app user holds it now. `pending_review`: another app
 * user held it and the app's restore policy is `review`: a person (or the app's backend) approves
 * or rejects the move; meanwhile show something like "We found your purchase; it is being
 * reviewed" and call `refresh()` later (the other account keeps access until it is approved).
 */
export type RestoreResult =
  | { status: 'restored'; entitlements: EntitlementsAnswer }
  | { status: 'pending_review'; transferId: string; entitlements: EntitlementsAnswer };
