import crypto from 'node:crypto';
import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import type { EmulatorStore } from '../common/types';
import type { Accounts, Mode } from './accounts';
import type { Catalog } from './catalog';
import { GoogleError, invalid, precondition } from './google-error';
import type { Caller } from './oauth';

type PurchaseV2 = androidpublisher_v3.Schema$SubscriptionPurchaseV2;
type Money = androidpublisher_v3.Schema$Money;

export type SubscriptionState =
  | 'SUBSCRIPTION_STATE_PENDING'
  | 'SUBSCRIPTION_STATE_ACTIVE'
  | 'SUBSCRIPTION_STATE_PAUSED'
  | 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD'
  | 'SUBSCRIPTION_STATE_ON_HOLD'
  | 'SUBSCRIPTION_STATE_CANCELED'
  | 'SUBSCRIPTION_STATE_EXPIRED'
  | 'SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED';

/** Stored purchase (kind `purchases`): what Play knows of one subscription purchase token. */
export interface PurchaseRow extends Record<string, unknown> {
  account: string;
  /** 'test' for license-tester purchases; a live credential sees them too, as on Play. */
  mode: Mode;
  token: string;
  productId: string;
  basePlanId: string;
  period: string;
  test: boolean;
  state: SubscriptionState;
  startTime: string;
  expiryTime: string;
  orderId: string;
  renewals: number;
  regionCode: string;
  price?: Money;
  app_user_id?: string;
  acknowledged: boolean;
  canceled?: 'user' | 'developer' | 'system';
  autoRenew: boolean;
  /** The token this purchase replaced (upgrade, downgrade or resubscribe), as Play's linkedPurchaseToken. */
  linkedPurchaseToken?: string;
  /** Set on a replaced purchase: Play ends it when its successor starts. */
  replacedBy?: string;
  /** When Play voided it (refund, chargeback, revocation): what the Voided Purchases API lists. */
  voidedTimeMillis?: number;
}

/**
 * Renewal periods as license testers see them: Play shortens them (a month renews every five
 * minutes) so a tester can watch renewals happen.
 */
const TEST_PERIOD_MS: Record<string, number> = {
  P1W: 5,
  P4W: 5,
  P1M: 5,
  P2M: 10,
  P3M: 10,
  P4M: 10,
  P6M: 15,
  P8M: 15,
  P1Y: 30,
};

function addPeriod(from: Date, period: string, test: boolean): Date {
  if (test) return new Date(from.getTime() + (TEST_PERIOD_MS[period] ?? 5) * 60_000);
  const m = period.match(/^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?$/);
  const d = new Date(from);
  if (!m) return new Date(from.getTime() + 30 * 86_400_000);
  d.setUTCFullYear(d.getUTCFullYear() + Number(m[1] ?? 0));
  d.setUTCMonth(d.getUTCMonth() + Number(m[2] ?? 0));
  d.setUTCDate(d.getUTCDate() + 7 * Number(m[3] ?? 0) + Number(m[4] ?? 0));
  return d;
}

/** Play refunds a purchase not acknowledged within three days of its start. */
const ACK_WINDOW_MS = 3 * 86_400_000;

/** Purchase tokens are long opaque strings; this keeps Play's look without meaning anything. */
function purchaseToken(): string {
  const letters = Array.from(crypto.randomBytes(24), (b) => String.fromCharCode(97 + (b % 26))).join('');
  return `${letters}.AO-J1O${crypto.randomBytes(96).toString('base64url')}`;
}

function orderId(): string {
  const d = (n: number) => Array.from(crypto.randomBytes(n), (b) => String(b % 10)).join('');
  return `GPA.${d(4)}-${d(4)}-${d(4)}-${d(5)}`;
}

export function purchases(store: EmulatorStore, accts: Accounts, cat: Catalog) {
  const rows = () => store.list('purchases') as PurchaseRow[];

  /**
   * Time passes between reads: an active purchase renews, a canceled one lapses at its expiry, and
   * one left unacknowledged for three days is refunded and revoked by Play (it reads EXPIRED).
   */
  function advance(p: PurchaseRow, now = new Date()): void {
    let changed = false;
    const live =
      p.state === 'SUBSCRIPTION_STATE_ACTIVE' ||
      p.state === 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD' ||
      p.state === 'SUBSCRIPTION_STATE_CANCELED';
    if (!p.acknowledged && live && now.getTime() - Date.parse(p.startTime) >= ACK_WINDOW_MS) {
      Object.assign(p, {
        state: 'SUBSCRIPTION_STATE_EXPIRED',
        canceled: 'system',
        autoRenew: false,
        expiryTime: new Date(Date.parse(p.startTime) + ACK_WINDOW_MS).toISOString(),
      });
      store.save();
      return;
    }
    while (p.state === 'SUBSCRIPTION_STATE_ACTIVE' && p.autoRenew && Date.parse(p.expiryTime) <= now.getTime()) {
      p.expiryTime = addPeriod(new Date(p.expiryTime), p.period, p.test).toISOString();
      p.renewals += 1;
      changed = true;
    }
    const lapses =
      p.state === 'SUBSCRIPTION_STATE_CANCELED' || (p.state === 'SUBSCRIPTION_STATE_ACTIVE' && !p.autoRenew);
    if (lapses && Date.parse(p.expiryTime) <= now.getTime()) {
      p.state = 'SUBSCRIPTION_STATE_EXPIRED';
      changed = true;
    }
    if (changed) store.save();
  }

  /** SubscriptionPurchaseV2 as purchases.subscriptionsv2.get answers it. */
  function render(p: PurchaseRow): PurchaseV2 {
    const latestOrder = p.renewals > 0 ? `${p.orderId}..${p.renewals - 1}` : p.orderId;
    const canceledStateContext =
      p.state === 'SUBSCRIPTION_STATE_CANCELED' || (p.state === 'SUBSCRIPTION_STATE_EXPIRED' && p.canceled)
        ? p.canceled === 'developer'
          ? { developerInitiatedCancellation: {} }
          : p.canceled === 'system'
            ? { systemInitiatedCancellation: {} }
            : { userInitiatedCancellation: { cancelTime: p.expiryTime } }
        : undefined;
    return {
      kind: 'androidpublisher#subscriptionPurchaseV2',
      regionCode: p.regionCode,
      lineItems: [
        {
          productId: p.productId,
          expiryTime: p.expiryTime,
          autoRenewingPlan: {
            autoRenewEnabled: p.autoRenew && p.state !== 'SUBSCRIPTION_STATE_CANCELED',
            ...(p.price ? { recurringPrice: p.price } : {}),
          },
          offerDetails: { basePlanId: p.basePlanId, offerTags: [] },
          latestSuccessfulOrderId: latestOrder,
        },
      ],
      startTime: p.startTime,
      subscriptionState: p.state,
      acknowledgementState: p.acknowledged ? 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED' : 'ACKNOWLEDGEMENT_STATE_PENDING',
      ...(p.app_user_id ? { externalAccountIdentifiers: { obfuscatedExternalAccountId: p.app_user_id } } : {}),
      ...(canceledStateContext ? { canceledStateContext } : {}),
      ...(p.test ? { testPurchase: {} } : {}),
      ...(p.linkedPurchaseToken ? { linkedPurchaseToken: p.linkedPurchaseToken } : {}),
    };
  }

  /** A token this caller may read: its app's, and for a test credential only license-tester purchases. */
  function visible(c: Caller, token: string): PurchaseRow {
    const p = rows().find(
      (r) => r.token === token && r.account === c.account.account && (c.mode === 'live' || r.mode === 'test'),
    );
    if (!p) throw new GoogleError(400, 'The purchase token is invalid.', 'INVALID_ARGUMENT', 'invalid');
    return p;
  }

  return {
    rows,
    advance,
    find: (account: string, token: string) => rows().find((r) => r.account === account && r.token === token),
    latest: (account: string) =>
      rows()
        .filter((r) => r.account === account)
        .at(-1),
    get(c: Caller, token: string): PurchaseV2 {
      const p = visible(c, token);
      advance(p);
      return render(p);
    },
    /** purchases.subscriptions.acknowledge (Play refunds purchases left unacknowledged for 3 days). */
    acknowledge(c: Caller, subscriptionId: string, token: string): Record<string, never> {
      const p = visible(c, token);
      if (p.productId !== subscriptionId) throw invalid('The subscription id does not match the purchase token.');
      if (p.state === 'SUBSCRIPTION_STATE_EXPIRED') throw precondition('The subscription has expired.');
      p.acknowledged = true;
      store.save();
      return {};
    },
    /**
     * purchases.voidedpurchases.list: subscriptions (type=1) voided at or after `startTime`
     * (milliseconds), oldest first, `maxResults` per page (Play's default and maximum: 1000) with
     * a page token. A test credential sees license-tester purchases only.
     */
    listVoided(c: Caller, query: Record<string, unknown>): androidpublisher_v3.Schema$VoidedPurchasesListResponse {
      const start = Number(query.startTime ?? 0) || 0;
      const end = Number(query.endTime ?? Date.now()) || Date.now();
      const max = Math.min(1000, Math.max(1, Number(query.maxResults ?? 1000) || 1000));
      const offset = Number(query.token ?? 0) || 0;
      const voided = rows()
        .filter(
          (r) =>
            r.account === c.account.account &&
            (c.mode === 'live' || r.mode === 'test') &&
            r.voidedTimeMillis !== undefined &&
            r.voidedTimeMillis >= start &&
            r.voidedTimeMillis <= end,
        )
        .sort((a, b) => a.voidedTimeMillis! - b.voidedTimeMillis!);
      const page = voided.slice(offset, offset + max);
      return {
        voidedPurchases: page.map((r) => ({
          kind: 'androidpublisher#voidedPurchase',
          purchaseToken: r.token,
          purchaseTimeMillis: String(Date.parse(r.startTime)),
          voidedTimeMillis: String(r.voidedTimeMillis),
          orderId: r.orderId,
          voidedSource: 0,
          voidedReason: 1,
          refundType: 1,
        })),
        ...(offset + max < voided.length ? { tokenPagination: { nextPageToken: String(offset + max) } } : {}),
      };
    },
    /** Play voids a purchase (a refund or chargeback) whose notification the receiver never got. */
    voidWithoutNotification(account: string, token: string): PurchaseRow {
      const p = rows().find((r) => r.account === account && r.token === token);
      if (!p) throw Object.assign(new Error('no such purchase token'), { status: 404 });
      const now = new Date();
      Object.assign(p, {
        state: 'SUBSCRIPTION_STATE_EXPIRED',
        canceled: 'developer',
        expiryTime: now.toISOString(),
        voidedTimeMillis: now.getTime(),
        autoRenew: false,
      });
      store.save();
      return p;
    },
    /** A purchase as a device would make it (sandbox when `test`), answering the purchase token. */
    create(params: Record<string, unknown>): PurchaseRow {
      const account = accts.resolve(params.account);
      const productRef = typeof params.product_id === 'string' ? params.product_id.trim() : '';
      if (!productRef) throw Object.assign(new Error('product_id is required'), { status: 400 });
      const found = cat.findForPurchase(account.account, productRef);
      const plan =
        typeof params.base_plan_id === 'string'
          ? found?.sub.basePlans?.find((b) => b.basePlanId === params.base_plan_id)
          : found?.plan;
      const regionCode = typeof params.region_code === 'string' ? params.region_code.toUpperCase() : 'US';
      const price =
        plan?.regionalConfigs?.find((r) => r.regionCode === regionCode)?.price ??
        plan?.regionalConfigs?.find((r) => r.price)?.price ??
        undefined;
      const test = params.test !== false;
      const period = plan?.autoRenewingBasePlanType?.billingPeriodDuration ?? 'P1M';
      // `start_time` back-dates a purchase (lifecycle tests near the acknowledgement window).
      const now =
        typeof params.start_time === 'string' && Number.isFinite(Date.parse(params.start_time))
          ? new Date(params.start_time)
          : new Date();
      // An upgrade, a downgrade (immediate replacement) or a resubscribe: a new token naming the old one, which Play
      // ends.
      const linked =
        typeof params.linked_purchase_token === 'string'
          ? rows().find((r) => r.account === account.account && r.token === params.linked_purchase_token)
          : undefined;
      if (typeof params.linked_purchase_token === 'string' && !linked)
        throw Object.assign(new Error('linked_purchase_token names no purchase of this app'), { status: 400 });
      const row: PurchaseRow = {
        account: account.account,
        mode: test ? 'test' : 'live',
        token: purchaseToken(),
        // A product unknown to the catalogue is still sold (the emulator is lenient), under the id given.
        productId: found?.sub.productId ?? productRef,
        basePlanId: plan?.basePlanId ?? (typeof params.base_plan_id === 'string' ? params.base_plan_id : productRef),
        period,
        test,
        state: (typeof params.state === 'string' && params.state.startsWith('SUBSCRIPTION_STATE_')
          ? params.state
          : 'SUBSCRIPTION_STATE_ACTIVE') as SubscriptionState,
        startTime: now.toISOString(),
        expiryTime: addPeriod(now, period, test).toISOString(),
        orderId: orderId(),
        renewals: 0,
        regionCode,
        ...(price ? { price } : {}),
        ...(typeof params.app_user_id === 'string' && params.app_user_id ? { app_user_id: params.app_user_id } : {}),
        acknowledged: false,
        autoRenew: true,
        ...(linked ? { linkedPurchaseToken: linked.token } : {}),
      };
      const inserted = store.insert('purchases', row);
      if (linked) {
        linked.state = 'SUBSCRIPTION_STATE_EXPIRED';
        linked.autoRenew = false;
        linked.replacedBy = inserted.token;
        if (Date.parse(linked.expiryTime) > now.getTime()) linked.expiryTime = now.toISOString();
        store.save();
      }
      return inserted;
    },
    /** What an RTDN's event did to the purchase, so the lookup that follows agrees with it. */
    applyNotification(p: PurchaseRow, type: string): void {
      const now = new Date();
      switch (type) {
        case 'SUBSCRIPTION_PURCHASED':
        case 'SUBSCRIPTION_RESTARTED':
          p.state = 'SUBSCRIPTION_STATE_ACTIVE';
          p.autoRenew = true;
          delete p.canceled;
          break;
        case 'SUBSCRIPTION_RENEWED':
        case 'SUBSCRIPTION_RECOVERED':
          p.state = 'SUBSCRIPTION_STATE_ACTIVE';
          p.autoRenew = true;
          p.expiryTime = addPeriod(
            new Date(Math.max(Date.parse(p.expiryTime), now.getTime())),
            p.period,
            p.test,
          ).toISOString();
          p.renewals += 1;
          break;
        case 'SUBSCRIPTION_CANCELED':
          p.state = 'SUBSCRIPTION_STATE_CANCELED';
          p.canceled = 'user';
          break;
        case 'SUBSCRIPTION_IN_GRACE_PERIOD':
          p.state = 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD';
          break;
        case 'SUBSCRIPTION_ON_HOLD':
          p.state = 'SUBSCRIPTION_STATE_ON_HOLD';
          break;
        case 'SUBSCRIPTION_PAUSED':
          p.state = 'SUBSCRIPTION_STATE_PAUSED';
          break;
        case 'SUBSCRIPTION_EXPIRED':
          p.state = 'SUBSCRIPTION_STATE_EXPIRED';
          if (Date.parse(p.expiryTime) > now.getTime()) p.expiryTime = now.toISOString();
          break;
        case 'SUBSCRIPTION_REVOKED':
        case 'VOIDED_PURCHASE':
          p.state = 'SUBSCRIPTION_STATE_EXPIRED';
          p.canceled = 'developer';
          p.expiryTime = now.toISOString();
          p.voidedTimeMillis = now.getTime();
          break;
        case 'SUBSCRIPTION_PENDING_PURCHASE_CANCELED':
          p.state = 'SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED';
          break;
        default:
          return;
      }
      store.save();
    },
  };
}

export type Purchases = ReturnType<typeof purchases>;
