import type { EntitlementState } from '../domain/entitlement';
import type { CanonicalEventKind } from '../domain/events';
import type { Mode, ProviderId } from '../domain/providers';
import type { SubscriptionSnapshot } from '../domain/provider-snapshot';

export type { Mode, ProviderId } from '../domain/providers';
export type { CanonicalEventKind } from '../domain/events';
export type Tier = 'weekly' | 'monthly' | 'quarterly' | 'annual';

/**
 * A decrypted provider credential. Shapes per provider (all strings):
 *  psp_a: { secret_key }                     (Stripe secret key, sk_test_/sk_live_)
 *  psp_b: { api_key }                        (Paddle API key, bearer)
 *  psp_c: { key_id, key_secret }             (Razorpay basic auth)
 *  store_android: { service_account_json }   (Google service account JSON with private_key, client_email, token_uri)
 *  store_ios: { issuer_id, key_id, private_key, bundle_id } (App Store Connect / Server API ES256 key)
 * Lives only inside activities and webhook verification; never logged, stored decrypted or returned.
 */
export type ProviderCredential = Record<string, string>;

/** Everything an adapter call needs about where and as whom to call. */
export interface ProviderContext {
  baseUrl: string;
  mode: Mode;
  credential: ProviderCredential;
  /**
   * The connected account (Stripe Connect acct_…, Paddle seller id, Razorpay merchant id, Play package name, App Store
   * bundle id).
   */
  accountRef: string;
  /** Optional per-call timeout in ms (default adapter-specific, ~10 s). */
  timeoutMs?: number;
  /**
   * Awaited before every HTTP request to the provider: the sync's pacer (providers/pacing.ts)
   * keeps the calls under the provider's documented rate limit. Absent: calls are not paced.
   */
  pace?: (endpoint?: string) => Promise<void>;
}

export interface PriceSpec {
  country: string; // ISO 3166-1 alpha-2, upper case
  currency: string; // ISO 4217, upper case
  amount_minor: number;
}

/** What the service wants to exist at the provider for one product. */
export interface ProductSpec {
  product_id: string; // our uuid; stored in the provider's metadata so drift can match objects
  tenant_id: string;
  sku: string;
  name: string;
  type: string; // 'subscription'
  tier: Tier | null;
  version: number;
  android_store_product_id?: string | null;
  ios_store_product_id?: string | null;
  trial_days?: number | null;
  prices: PriceSpec[];
}

export interface RemoteProduct {
  external_id: string;
  sku: string | null; // from metadata / product id
  name: string;
  active: boolean;
  product_id?: string | null; // our uuid, when the provider kept our metadata
}

export interface PaymentLinkResult {
  kind: 'payment_link' | 'plan';
  external_id: string;
  url?: string;
}

export interface NormalisedEvent {
  provider: ProviderId;
  id: string; // the provider's event id (unique per provider)
  type: string; // the provider's own type, e.g. 'invoice.payment_succeeded'
  kind: CanonicalEventKind; // domain/events.ts: one vocabulary for every provider
  account_ref: string | null; // routes to the tenant
  mode: Mode;
  occurred_at: string; // ISO
  subscription_external_id?: string | null;
  customer_external_id?: string | null;
  email?: string | null;
  app_user_id?: string | null;
  /** The SKU, from the seller's side only (a price's or plan's metadata, a payment link we made), never the buyer's. */
  sku?: string | null;
  /**
   * The seller's catalogue object bought, where the event names it by id and not its SKU (a Razorpay
   * plan id): the receiver asks the adapter's `skuOfPrice` for its SKU.
   */
  price_ref?: string | null;
  trial_start?: string | null;
  trial_end?: string | null;
  current_period_end?: string | null;
  /** A cancellation's effective time (when access ended); see domain/subscription.ts LifecycleEvent. */
  ended_at?: string | null;
  /** A scheduled cancellation's date, or null when the event says none is scheduled. */
  cancel_at?: string | null;
  /** The buyer's country (ISO 3166-1 alpha-2, domain/country.ts) when the event says it. */
  country?: string | null;
  /** The provider payload as received (the caller redacts before storing). */
  payload: unknown;
}

export interface WebhookInput {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  /** Stripe/Paddle/Razorpay signing secret; for store_android the expected OIDC audience; unused for store_ios. */
  secret: string;
  now?: Date;
}

export interface StorePurchase {
  provider: 'store_android' | 'store_ios';
  purchase_id: string; // purchase token (Android) / original transaction id (iOS)
  store_product_id: string;
  app_user_id?: string | null;
  is_sandbox: boolean;
  state: EntitlementState | 'pending'; // pending: bought but not yet paid (no entitlement yet)
  expires_at?: string | null;
  acknowledged?: boolean;
  /** Play: the purchase token this purchase replaces (`linkedPurchaseToken`: upgrade, downgrade, resubscribe). */
  linked_purchase_id?: string | null;
  /** App Store: `inAppOwnershipType` (a family member's shared access, or the purchaser's own). */
  ownership?: 'purchased' | 'family_shared';
  /** The buyer's country (ISO 3166-1 alpha-2): Play's `regionCode`, the App Store's `storefront` brought to alpha-2. */
  country?: string | null;
  raw: unknown;
}

export interface SignedTransactionIds {
  transaction_id: string;
  original_transaction_id: string;
  product_id: string;
}

/** A store customer's distinct purchases (App Store: original transaction ids), newest first, as many as were asked. */
export interface CustomerPurchases {
  purchases: string[];
  /** The customer has more than those: older ones, beyond the bound asked for. */
  more: boolean;
}

/** One page of a web provider's subscription list (docs/reconciliation.md). */
export interface SubscriptionPage {
  /** The subscriptions of the page the lifecycle can hold (a checkout whose first payment is pending is left out). */
  snapshots: SubscriptionSnapshot[];
  /** How many objects the page held, left out ones included (progress counts them). */
  seen: number;
  /** The cursor of the next page; null: this was the last. */
  next: string | null;
}

export interface OAuthConnectResult {
  account_ref: string;
  credential: ProviderCredential; // the access token / key handed back by the token exchange
  mode: Mode;
}

/**
 * One interface for all five providers, in the shape the workflows need.
 * Every write takes an idempotency key derived from (tenant, object, version), so a
 * retried activity never creates a second remote object.
 * Errors thrown are ProviderError subclasses (see errors.ts).
 */
export interface ProviderAdapter {
  readonly provider: ProviderId;
  readonly authKind: 'key_pair' | 'store';
  /** Cheap authenticated call proving the provider is reachable with this credential. */
  checkReachable(ctx: ProviderContext): Promise<void>;
  /** Every catalogue object at the provider (all pages), for drift. */
  listRemoteProducts(ctx: ProviderContext): Promise<RemoteProduct[]>;
  /** Create or update the product (matched by our product_id/sku). */
  upsertProduct(ctx: ProviderContext, spec: ProductSpec, idempotencyKey: string): Promise<{ external_id: string }>;
  /** Make the provider's prices match spec.prices; returns how many locales are priced. */
  upsertPrices(
    ctx: ProviderContext,
    externalProductId: string,
    spec: ProductSpec,
    idempotencyKey: string,
  ): Promise<{ priced_locales: number; price_ids: string[] }>;
  /**
   * App-scoped purchase entry point: a payment link (psp_a, psp_c) or a subscription plan/price (psp_b, psp_c, stores).
   */
  ensurePaymentLink(
    ctx: ProviderContext,
    externalProductId: string,
    spec: ProductSpec,
    appId: string,
    idempotencyKey: string,
  ): Promise<PaymentLinkResult>;
  /** Stop sales of a product (stores: deactivate base plans / remove from sale; psps: archive product). */
  stopSales(ctx: ProviderContext, externalProductId: string, spec: ProductSpec): Promise<void>;
  /** Verify signature and parse; throws WebhookVerificationError. */
  verifyWebhook(input: WebhookInput): Promise<NormalisedEvent>;
  /** The SKU the seller's object `priceRef` names (an event's `price_ref`); null when there is none by that id. */
  skuOfPrice?(ctx: ProviderContext, priceRef: string): Promise<string | null>;
  /** The `price_ref` a subscription is on now, for an event that names the subscription alone (a payment). */
  priceOfSubscription?(ctx: ProviderContext, subscriptionId: string): Promise<string | null>;
  /** Stores only: re-fetch a purchase from the store's server API. */
  fetchStorePurchase?(ctx: ProviderContext, purchaseId: string, storeProductId?: string): Promise<StorePurchase>;
  /** Play only: acknowledge a purchase (Play refunds one left unacknowledged for three days). */
  acknowledgeStorePurchase?(ctx: ProviderContext, purchaseId: string, storeProductId: string): Promise<void>;
  /** Play's Voided Purchases API: subscription purchases voided since `sinceMs`, oldest first (at most `max`). */
  listVoidedPurchases?(
    ctx: ProviderContext,
    sinceMs: number,
    max: number,
  ): Promise<{ purchase_id: string; voided_at_ms: number }[]>;
  /**
   * App Store only: verify a signed transaction a device handed over (chain to the trusted
   * roots, bundle id, the context's environment) and answer the ids it names.
   */
  verifySignedTransaction?(ctx: ProviderContext, signedTransaction: string): Promise<SignedTransactionIds>;
  /**
   * App Store only: the distinct purchases of the customer who made `transactionId` (its
   * transaction history), newest first, reading at most `maxPages` pages and answering at most
   * `maxPurchases`.
   */
  listCustomerPurchases?(
    ctx: ProviderContext,
    transactionId: string,
    limits: { maxPages: number; maxPurchases: number },
  ): Promise<CustomerPurchases>;
  /**
   * Web PSPs only: one page of every subscription of the account (the provider's list API, its
   * own cursor), for import and reconciliation.
   */
  listSubscriptions?(ctx: ProviderContext, cursor: string | null, limit: number): Promise<SubscriptionPage>;
  /**
   * Web PSPs only: one subscription as the provider holds it now (its get-one read), for the
   * reconciliation; null when the provider has none by that id (or none the lifecycle can hold).
   */
  getSubscription?(ctx: ProviderContext, subscriptionId: string): Promise<SubscriptionSnapshot | null>;
  /** Web PSPs only: exchange an OAuth code from the connect flow for a connected account. */
  exchangeOAuthCode?(
    baseUrl: string,
    client: { client_id: string; client_secret: string },
    code: string,
  ): Promise<OAuthConnectResult>;
}
