import { BillingError } from './errors.js';
import { SdkHttp } from './http.js';
import { JsonCache, expiresAt, isFresh, ttlFrom, type CacheEntry } from './cache.js';
import {
  EntitlementTokenError,
  ed25519Available,
  verifyEntitlementToken,
  type EntitlementTokenClaims,
} from './token.js';
import { routeCheckout } from './routing.js';
import { defaultStorage } from './storage.js';
import { isPremiumState } from './premium.js';
import { appAccountTokenFor } from './app-account-token.js';

/** A JSON object from the service, before it is checked field by field (parseSubscriber, ttlFrom). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type JsonObject = Record<string, any>;
import {
  PLATFORMS,
  type BillingOptions,
  type CheckoutProduct,
  type CheckoutResult,
  type Clock,
  type Entitlement,
  type EntitlementsAnswer,
  type PaywallAnswer,
  type RestorablePurchase,
  type RestoreResult,
  type StorePurchase,
  type WaitOptions,
} from './types.js';

const DEFAULT_REFRESH_WINDOW_MS = 10_000;
/** The service holds a wait at most this long (api/sdk/entitlement-waits.ts, MAX_WAIT_MS). */
export const MAX_WAIT_MS = 20_000;
/** Past the service's bound, how long the SDK still gives its answer to arrive before it gives up on the wait. */
const WAIT_GRACE_MS = 5_000;
const systemClock: Clock = { now: () => Date.now() };

interface SubscriberValue {
  isPremium: boolean;
  entitlements: Entitlement[];
}

let current: Billing | null = null;

export class Billing {
  /**
   * Call once at application start. A second call (typically configure() inside a
   * re-rendering component) returns the first instance unchanged and warns: a fresh
   * instance per render would defeat the cache and hit the service's rate limits.
   */
  static configure(options: BillingOptions): Billing {
    if (current) {
      (options.warn ?? current.warn)(
        'Billing.configure() was called again; returning the instance configured first. ' +
          'Configure the SDK once at application start, not inside a component that re-renders: ' +
          'each new instance would bypass the cache and trip the service rate limits.',
      );
      return current;
    }
    current = new Billing(options);
    return current;
  }

  /** The configured instance, or an invalid_config error when configure() was never called. */
  static get shared(): Billing {
    if (!current) throw new BillingError('invalid_config', 'Call Billing.configure() at application start first.');
    return current;
  }

  /** Forget the instance (sign-out, or between tests). The storage keeps its entries. */
  static reset(): void {
    current = null;
  }

  private readonly http: SdkHttp;
  private readonly cache: JsonCache;
  private readonly clock: Clock;
  private readonly refreshWindowMs: number;
  private readonly warn: (m: string) => void;
  /** The signed-in app user: the one configured, until `identify()` names another. */
  private userId: string;
  private subscriberKey = '';
  private readonly paywallKey: string;
  private tokenKey = '';
  private inflight: Promise<EntitlementsAnswer> | null = null;
  /**
   * Set when a checkout may have changed the entitlement (a web checkout opened, a store purchase
   * registered): the next fetch must ask the service, neither answering from the coalescing
   * window nor joining a request that started before the checkout.
   */
  private purchaseMayHaveChanged = false;
  /** Which fetch `inflight` is, so an older one finishing does not clear a newer one. */
  private fetchGeneration = 0;
  private paywallInflight: Promise<PaywallAnswer> | null = null;
  /** The bounded wait in flight: concurrent waits share it. */
  private waitInflight: Promise<EntitlementsAnswer> | null = null;
  /** When the last request for the subscriber left (successful or not): the coalescing anchor. */
  private lastAttemptAt: number | null = null;

  private constructor(private readonly options: BillingOptions) {
    validate(options);
    const fetchImpl = options.fetch ?? (globalThis.fetch ? globalThis.fetch.bind(globalThis) : undefined);
    if (!fetchImpl) throw new BillingError('invalid_config', 'No fetch on this platform: pass options.fetch.');
    this.http = new SdkHttp(options.backend, options.publishableKey, fetchImpl);
    this.cache = new JsonCache(options.storage ?? defaultStorage(options.platform));
    this.clock = options.clock ?? systemClock;
    this.refreshWindowMs = options.refreshWindowMs ?? DEFAULT_REFRESH_WINDOW_MS;
    this.warn = options.warn ?? ((m) => console.warn(m));
    this.userId = options.appUserId;
    this.useKeysOf(options.appUserId);
    this.paywallKey = `billing.v2:paywall:${options.publishableKey}`;
  }

  /** Keyed by key and user: a pk_test answer never serves a pk_live app, nor one user another. */
  private useKeysOf(appUserId: string): void {
    const scope = `${this.options.publishableKey}:${appUserId}`;
    this.subscriberKey = `billing.v2:subscriber:${scope}`;
    this.tokenKey = `billing.v2:token:${scope}`;
  }

  /**
   * An anonymous app user id for an app whose user has not signed in yet: `$RCAnonymousID:` and
   * 32 hex digits, the form RevenueCat's SDKs use too, so one rule on the service knows it. Keep it
   * (storage) and configure with it; when the user signs in, `identify()` makes it theirs.
   */
  static anonymousId(): string {
    const bytes = new Uint8Array(16);
    globalThis.crypto.getRandomValues(bytes);
    return `$RCAnonymousID:${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  }

  /**
   * The user signed in as `appUserId`. From an anonymous id (`Billing.anonymousId()`) the service
   * makes the anonymous user an alias of `appUserId`: one customer, whose purchases (made before
   * the sign-in) both ids answer from then on. Between two identified ids nothing is merged (only
   * the app's own backend can, with its secret key): the SDK simply answers for the new user.
   * This instance then answers for `appUserId`; resolves with their entitlements.
   */
  async identify(appUserId: string): Promise<EntitlementsAnswer> {
    if (typeof appUserId !== 'string' || appUserId.trim() === '')
      throw new BillingError('invalid_config', 'identify() needs a non-empty app user id.');
    if (appUserId === this.userId) return this.getEntitlements();
    const body = await this.http.request<JsonObject>(
      'POST',
      `/subscribers/${encodeURIComponent(this.userId)}/identify`,
      { new_app_user_id: appUserId },
    );
    this.userId = appUserId;
    this.useKeysOf(appUserId);
    // Nothing in flight or coalesced for the previous user applies (a fetch still running for them is not joined).
    this.fetchGeneration++;
    this.inflight = null;
    this.lastAttemptAt = null;
    return this.keepSubscriber(appUserId, this.subscriberKey, body);
  }

  /**
   * Restore a purchase the store already has (Play Billing's `queryPurchasesAsync`, StoreKit's
   * `Transaction.currentEntitlements`) for this app user. What happens when another app user of the
   * app holds it is the app's restore policy, set on the service (its docs: transfers):
   * `restored` (theirs now, or it was already), `pending_review` (someone must approve the move
   * first: show "your purchase was found and is being reviewed"; the other account keeps access
   * meanwhile, and `refresh()` later shows the outcome), or a `purchase_registration_failed` error
   * with `serviceCode` `purchase_token_reused` (the policy keeps purchases with their first owner).
   */
  async restore(purchase: RestorablePurchase): Promise<RestoreResult> {
    const pending = await this.register(
      purchase.provider === 'store_ios'
        ? { app_user_id: this.userId, provider: 'store_ios', signed_transaction: purchase.signedTransaction }
        : {
            app_user_id: this.userId,
            provider: 'store_android',
            product_id: purchase.productId,
            purchase_token: purchase.purchaseToken,
            ...(purchase.orderId ? { order_id: purchase.orderId } : {}),
          },
    );
    const entitlements = await this.refresh();
    return pending
      ? { status: 'pending_review', transferId: pending, entitlements }
      : { status: 'restored', entitlements };
  }

  /**
   * POST /v1/sdk/store-purchases; answers the id of the transfer waiting for review when the service
   * answered 202 (the app's restore policy is `review`), else null. Refusals throw
   * `purchase_registration_failed`. Either way the next refresh must ask the service.
   */
  private async register(registration: Record<string, unknown>): Promise<string | null> {
    let body: JsonObject;
    try {
      body = await this.http.request<JsonObject>('POST', '/store-purchases', registration);
    } catch (e) {
      const err = asBillingError(e);
      throw new BillingError('purchase_registration_failed', err.message, err.details);
    } finally {
      this.purchaseMayHaveChanged = true;
    }
    const transfer = body.transfer;
    return transfer && transfer.status === 'pending' && typeof transfer.id === 'string' ? transfer.id : null;
  }

  /**
   * The app user's entitlement token (a signed form of the premium answer the app's own backend
   * checks offline: the service's docs/entitlement-tokens.md). The SDK keeps the latest beside its
   * cache and asks for a new one when it has less than a minute left. Once one is kept, a cached
   * answer that disagrees with it, or whose token does not verify, is refused and asked again.
   */
  async entitlementToken(): Promise<string> {
    const kept = await this.cache.read<string>(this.tokenKey);
    if (kept && isFresh(kept, this.clock.now() + TOKEN_RENEW_MS)) return kept.value;
    const body = await this.http.request<JsonObject>('GET', `/subscribers/${encodeURIComponent(this.userId)}/token`);
    const token = body.token;
    const until = typeof body.expires_at === 'string' ? Date.parse(body.expires_at) : NaN;
    if (typeof token !== 'string' || !Number.isFinite(until))
      throw new BillingError('invalid_response', 'The token answer carries no token.');
    const now = this.clock.now();
    await this.cache.write(this.tokenKey, {
      fetchedAt: now,
      ttlSeconds: Math.max(0, (until - now) / 1000),
      value: token,
    });
    // The token is the newest word: a cached answer that says otherwise is asked again.
    const entry = await this.cache.read<SubscriberValue>(this.subscriberKey);
    const claims = decodeClaims(token);
    if (entry && claims && claims.premium !== entry.value.isPremium) await this.cache.remove(this.subscriberKey);
    return token;
  }

  /** A kept token that says otherwise than the service's newer answer is dropped (entitlementToken() fetches anew). */
  /**
   * A subscriber answer just fetched: cached under the key it was asked for, the token dropped if it
   * no longer states it (only while that key is still the current user's), and answered as fresh.
   */
  private async keepSubscriber(user: string, key: string, body: JsonObject) {
    const fresh: CacheEntry<SubscriberValue> = {
      fetchedAt: this.clock.now(),
      ttlSeconds: ttlFrom(body),
      value: parseSubscriber(body),
    };
    await this.cache.write(key, fresh);
    if (key === this.subscriberKey) await this.dropStaleToken(fresh);
    return answer(user, fresh, false);
  }

  private async dropStaleToken(fresh: CacheEntry<SubscriberValue>): Promise<void> {
    const kept = await this.cache.read<string>(this.tokenKey);
    if (kept && decodeClaims(kept.value)?.premium !== fresh.value.isPremium) await this.cache.remove(this.tokenKey);
  }

  /** The cached answer checked against the kept token: 'refuse' (edited or wrong), or whether it verified. */
  private async checkCached(entry: CacheEntry<SubscriberValue>): Promise<'refuse' | boolean> {
    const kept = await this.cache.read<string>(this.tokenKey);
    if (!kept) return false;
    const claims = decodeClaims(kept.value);
    const mode = this.options.publishableKey.startsWith('pk_live_') ? 'live' : 'test';
    if (!claims || claims.sub !== this.userId || claims.mode !== mode) return 'refuse';
    if (claims.premium !== entry.value.isPremium) return 'refuse';
    if (!(await ed25519Available())) return false;
    try {
      // The signature and the audience it names; its age is the cache's business, not a forgery.
      await verifyEntitlementToken(kept.value, {
        jwksUrl: `${this.options.backend.replace(/\/+$/, '')}/.well-known/jwks.json`,
        audience: `${claims.tenant_id}:${mode}`,
        now: claims.iat * 1000,
        fetch: this.options.fetch,
      });
    } catch (e) {
      if (e instanceof EntitlementTokenError && e.reason !== 'unsupported') return 'refuse';
      return false;
    }
    return this.clock.now() < claims.exp * 1000;
  }

  /** The app user this instance answers for: the configured one, or the last `identify()`. */
  get appUserId(): string {
    return this.userId;
  }

  /** Cache-first: true while an entitlement is active or in grace. */
  async isPremium(): Promise<boolean> {
    return (await this.getEntitlements()).isPremium;
  }

  /** Cache-first: the service is asked only once the TTL it gave has run out. */
  async getEntitlements(): Promise<EntitlementsAnswer> {
    const entry = await this.cache.read<SubscriberValue>(this.subscriberKey);
    if (entry && isFresh(entry, this.clock.now())) {
      const checked = await this.checkCached(entry).catch(() => false as const);
      if (checked !== 'refuse') return { ...answer(this.userId, entry, false), verified: checked };
      // Edited, or not this user's: neither served nor kept as the offline fallback.
      await this.cache.remove(this.subscriberKey);
      await this.cache.remove(this.tokenKey);
      return this.fetchSubscriber(null);
    }
    return this.fetchSubscriber(entry);
  }

  /**
   * The one forced fetch: call it after the checkout tab closes. Calls within the
   * refresh window of the previous request share that request (or its answer).
   */
  async refresh(): Promise<EntitlementsAnswer> {
    const entry = await this.cache.read<SubscriberValue>(this.subscriberKey);
    return this.fetchSubscriber(entry);
  }

  /**
   * After a checkout: one request the service holds until this app user is premium (answered
   * the moment the purchase commits) or `timeoutMs` (≤ 20 s) has passed, then answers what is
   * true. Never a poll: one request per call, and concurrent calls share it. When the service
   * cannot hold it (429/503, or unreachable) it is one plain forced fetch instead.
   */
  async waitForPremium(options: WaitOptions = {}): Promise<EntitlementsAnswer> {
    if (this.waitInflight) return this.waitInflight;
    const asked = Number(options.timeoutMs ?? MAX_WAIT_MS);
    const timeoutMs = Number.isFinite(asked) ? Math.max(0, Math.min(MAX_WAIT_MS, Math.floor(asked))) : MAX_WAIT_MS;
    // Set before any await, so a second call in the same tick joins this one.
    this.waitInflight = (async () => {
      const entry = await this.cache.read<SubscriberValue>(this.subscriberKey);
      this.purchaseMayHaveChanged = false;
      this.lastAttemptAt = this.clock.now();
      const abort = typeof AbortController === 'function' ? new AbortController() : undefined;
      const guard = abort ? setTimeout(() => abort.abort(), timeoutMs + WAIT_GRACE_MS) : undefined;
      try {
        const path = `/subscribers/${encodeURIComponent(this.userId)}?wait_for=premium&timeout_ms=${timeoutMs}`;
        const body = await this.http.request<JsonObject>('GET', path, undefined, abort?.signal);
        return await this.keepSubscriber(this.userId, this.subscriberKey, body);
      } catch (e) {
        // The service could not hold the wait (its bounds, or it is away): one ordinary forced read.
        const retryable = e instanceof BillingError && (e.code === 'network_unavailable' || e.status === 429);
        if (!retryable) throw e;
        this.purchaseMayHaveChanged = true;
        return this.fetchSubscriber(entry);
      } finally {
        if (guard) clearTimeout(guard);
        this.waitInflight = null;
      }
    })();
    return this.waitInflight;
  }

  /** The tenant's published paywall, cached like the entitlements. */
  async getPaywall(): Promise<PaywallAnswer> {
    const entry = await this.cache.read<Record<string, unknown>>(this.paywallKey);
    const now = this.clock.now();
    if (entry && isFresh(entry, now))
      return { paywall: entry.value, fetchedAt: entry.fetchedAt, expiresAt: expiresAt(entry), stale: false };
    if (this.paywallInflight) return this.paywallInflight;
    this.paywallInflight = (async () => {
      try {
        const body = await this.http.request<JsonObject>('GET', '/paywall');
        const fresh: CacheEntry<Record<string, unknown>> = {
          fetchedAt: this.clock.now(),
          ttlSeconds: ttlFrom(body),
          value: body,
        };
        await this.cache.write(this.paywallKey, fresh);
        return { paywall: body, fetchedAt: fresh.fetchedAt, expiresAt: expiresAt(fresh), stale: false };
      } catch (e) {
        if (entry && e instanceof BillingError && e.code === 'network_unavailable')
          return { paywall: entry.value, fetchedAt: entry.fetchedAt, expiresAt: expiresAt(entry), stale: true };
        throw e;
      } finally {
        this.paywallInflight = null;
      }
    })();
    return this.paywallInflight;
  }

  /**
   * Routes per the spec's table. Routing failures do not throw: they come back as the
   * Error state with its reason, so a UI can render it; the browser is never opened then.
   */
  async checkout(args: {
    planId: string;
    product: CheckoutProduct;
    waitForPremium?: boolean | WaitOptions;
  }): Promise<CheckoutResult> {
    const route = routeCheckout(this.options.platform, args.product, this.options.storeBilling);
    if (route.lane === 'blocked') return errorState('blocked', new BillingError(route.code, route.reason));
    if (route.lane === 'store') return this.storeCheckout(args.planId, route.store, route.productId);
    const wait = args.waitForPremium === true ? {} : args.waitForPremium || undefined;
    return this.webCheckout(args.planId, wait);
  }

  private async webCheckout(planId: string, wait: WaitOptions | undefined): Promise<CheckoutResult> {
    if (typeof planId !== 'string' || planId.trim() === '')
      return errorState('web', new BillingError('invalid_config', 'checkout() needs a planId.'));
    const open = this.options.openCheckout ?? browserTab(this.options.platform, wait !== undefined);
    if (!open)
      return errorState(
        'web',
        new BillingError(
          'checkout_unavailable',
          'No way to open the checkout: pass openCheckout (an in-app browser tab) to Billing.configure.',
        ),
      );
    let url: string;
    try {
      const body = await this.http.request<{ url?: unknown }>('GET', `/checkout?plan_id=${encodeURIComponent(planId)}`);
      if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url))
        throw new BillingError('invalid_response', 'The checkout answer carries no http(s) url.');
      url = withAppUser(body.url, this.userId);
    } catch (e) {
      const err = asBillingError(e);
      return errorState(
        'web',
        err.status === 404 ? new BillingError('checkout_unavailable', err.message, err.details) : err,
      );
    }
    try {
      await open(url);
    } catch (cause) {
      return errorState('web', new BillingError('checkout_unavailable', 'openCheckout failed.', { cause }));
    }
    // The tab may close within seconds (one-tap wallets): the refresh after it must ask.
    this.purchaseMayHaveChanged = true;
    if (!wait) return { state: 'opened', lane: 'web', url };
    // `open` resolved: the tab is closed. The provider's events may still be on their way, so
    // the service holds one request until the purchase shows (or the bound passes).
    let entitlements: EntitlementsAnswer;
    try {
      entitlements = await this.waitForPremium(wait);
    } catch (e) {
      return errorState('web', asBillingError(e));
    }
    return entitlements.isPremium
      ? { state: 'purchased', lane: 'web', url, entitlements }
      : { state: 'opened', lane: 'web', url, entitlements };
  }

  private async storeCheckout(
    planId: string,
    provider: 'store_android' | 'store_ios',
    productId: string,
  ): Promise<CheckoutResult> {
    const store = this.options.storeBilling!;
    let purchase: StorePurchase | null;
    try {
      purchase =
        provider === 'store_ios'
          ? await store.purchase({
              productId,
              activity: store.activity,
              appAccountToken: appAccountTokenFor(this.userId),
            })
          : await store.purchase({ productId, activity: store.activity });
    } catch (cause) {
      return errorState(
        'store',
        new BillingError('store_purchase_failed', 'The store billing flow failed.', { cause }),
      );
    }
    if (!purchase) return { state: 'cancelled', lane: 'store' };
    let registration: Record<string, unknown>;
    if (provider === 'store_ios') {
      if (!('signedTransaction' in purchase) || typeof purchase.signedTransaction !== 'string')
        return errorState(
          'store',
          new BillingError(
            'store_purchase_failed',
            'StoreKit returned no signedTransaction (the transaction’s jwsRepresentation).',
          ),
        );
      registration = { app_user_id: this.userId, provider, signed_transaction: purchase.signedTransaction };
    } else {
      if (!('purchaseToken' in purchase) || typeof purchase.purchaseToken !== 'string')
        return errorState(
          'store',
          new BillingError('store_purchase_failed', 'Play Billing returned no purchaseToken.'),
        );
      registration = {
        app_user_id: this.userId,
        provider,
        plan_id: planId,
        product_id: purchase.productId,
        purchase_token: purchase.purchaseToken,
        ...(purchase.orderId ? { order_id: purchase.orderId } : {}),
      };
    }
    let pending: string | null;
    try {
      pending = await this.register(registration);
    } catch (e) {
      return errorState('store', asBillingError(e));
    }
    // The registration changed the entitlement: this refresh is not coalesced away (register() said so).
    const entitlements = await this.refresh();
    if (pending) return { state: 'pending_review', lane: 'store', purchase, transferId: pending, entitlements };
    return { state: 'purchased', lane: 'store', purchase, entitlements };
  }

  private fetchSubscriber(entry: CacheEntry<SubscriberValue> | null): Promise<EntitlementsAnswer> {
    const mustAsk = this.purchaseMayHaveChanged;
    if (this.inflight && !mustAsk) return this.inflight;
    const now = this.clock.now();
    // Coalescing: inside the window of the previous request, answer from what it brought.
    if (!mustAsk && entry && this.lastAttemptAt !== null && now - this.lastAttemptAt < this.refreshWindowMs)
      return Promise.resolve(answer(this.userId, entry, !isFresh(entry, now) || entry.fetchedAt < this.lastAttemptAt));
    this.purchaseMayHaveChanged = false;
    this.lastAttemptAt = now;
    const generation = ++this.fetchGeneration;
    // The user asked about, fixed now: an identify() meanwhile must not get this answer under its key.
    const user = this.userId;
    const key = this.subscriberKey;
    this.inflight = (async () => {
      try {
        const body = await this.http.request<JsonObject>('GET', `/subscribers/${encodeURIComponent(user)}`);
        return await this.keepSubscriber(user, key, body);
      } catch (e) {
        // Offline: the last known value, marked stale. Nothing known: the error itself.
        if (entry && e instanceof BillingError && e.code === 'network_unavailable') return answer(user, entry, true);
        throw e;
      } finally {
        // A newer request (after a checkout) may have replaced this one: leave that one be.
        if (this.fetchGeneration === generation) this.inflight = null;
      }
    })();
    return this.inflight;
  }
}

function answer(appUserId: string, entry: CacheEntry<SubscriberValue>, stale: boolean): EntitlementsAnswer {
  return {
    appUserId,
    isPremium: entry.value.isPremium,
    entitlements: entry.value.entitlements,
    fetchedAt: entry.fetchedAt,
    expiresAt: expiresAt(entry),
    cacheTtlSeconds: entry.ttlSeconds,
    stale,
    verified: false,
  };
}

/** A renewed token is asked for this long before the kept one expires. */
const TOKEN_RENEW_MS = 60_000;

function decodeClaims(token: string): EntitlementTokenClaims | null {
  try {
    const p = token.split('.')[1];
    const b64 = p.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (p.length % 4)) % 4);
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const c = JSON.parse(new TextDecoder().decode(bytes));
    return c && typeof c === 'object' && typeof c.premium === 'boolean' ? (c as EntitlementTokenClaims) : null;
  } catch {
    return null;
  }
}

function parseSubscriber(body: JsonObject): SubscriberValue {
  const list = Array.isArray(body.entitlements)
    ? body.entitlements
    : Array.isArray(body.entitlements?.data)
      ? body.entitlements.data
      : null;
  if (!list) throw new BillingError('invalid_response', 'The subscriber answer carries no entitlements list.');
  const entitlements = list as Entitlement[];
  // The service's own answer when it gives one; else the same rule applied here (see premium.ts).
  const isPremium =
    typeof body.is_premium === 'boolean' ? body.is_premium : entitlements.some((e) => isPremiumState(e.state));
  return { isPremium, entitlements };
}

/**
 * The hosted checkout learns who is paying from `client_reference_id` (Stripe's payment-link
 * parameter): the provider copies it into the checkout's events, which is how the service
 * ties the payment to this app user.
 */
function withAppUser(url: string, appUserId: string): string {
  const u = new URL(url);
  if (!u.searchParams.has('client_reference_id')) u.searchParams.set('client_reference_id', appUserId);
  return u.toString();
}

function errorState(lane: 'web' | 'store' | 'blocked', error: BillingError): CheckoutResult {
  return { state: 'error', lane, reason: error.code, error };
}

function asBillingError(e: unknown): BillingError {
  return e instanceof BillingError ? e : new BillingError('invalid_response', String(e), { cause: e });
}

/**
 * On the web (and desktop shells with a window), a new tab; elsewhere the app must supply one.
 * With `untilClosed` it resolves once the tab is closed (its `closed` flag, read locally every
 * 250 ms: no request), which is when a checkout's wait starts.
 */
function browserTab(platform: string, untilClosed: boolean): ((url: string) => void | Promise<void>) | undefined {
  const w = (globalThis as { window?: { open?: (u: string, t: string) => unknown } }).window;
  if ((platform === 'web' || platform === 'desktop') && typeof w?.open === 'function')
    return (url) => {
      const tab = w.open!(url, '_blank') as { closed?: boolean } | null;
      if (!tab) throw new Error('The browser blocked the checkout tab (popup blocker).');
      if (!untilClosed) return;
      return new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (tab.closed) {
            clearInterval(timer);
            resolve();
          }
        }, 250);
      });
    };
  return undefined;
}

function validate(o: BillingOptions): void {
  if (!o || typeof o !== 'object')
    throw new BillingError('invalid_config', 'Billing.configure needs an options object.');
  if (typeof o.publishableKey !== 'string' || !/^pk_(test|live)_\S+$/.test(o.publishableKey))
    throw new BillingError(
      'invalid_config',
      'publishableKey must be a pk_test_… or pk_live_… key (never a secret key in an app).',
    );
  if (typeof o.backend !== 'string' || !/^https?:\/\/\S+$/.test(o.backend))
    throw new BillingError('invalid_config', 'backend must be the http(s) URL of the API host.');
  if (typeof o.appUserId !== 'string' || o.appUserId.trim() === '')
    throw new BillingError('invalid_config', 'appUserId must be a non-empty string.');
  if (!(PLATFORMS as readonly string[]).includes(o.platform))
    throw new BillingError('invalid_config', `platform must be one of ${PLATFORMS.join(', ')}.`);
}
