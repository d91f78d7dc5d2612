import type { NormalisedEvent, CanonicalEventKind } from '../types';

/** SubscriptionNotification.notificationType (Play RTDN reference). 14–16 and 21 are unassigned. */
export const SUBSCRIPTION_NOTIFICATION_TYPES: Record<number, { name: string; kind: CanonicalEventKind }> = {
  1: { name: 'SUBSCRIPTION_RECOVERED', kind: 'renewed' },
  2: { name: 'SUBSCRIPTION_RENEWED', kind: 'renewed' },
  3: { name: 'SUBSCRIPTION_CANCELED', kind: 'subscription_canceled' },
  4: { name: 'SUBSCRIPTION_PURCHASED', kind: 'subscription_created' },
  5: { name: 'SUBSCRIPTION_ON_HOLD', kind: 'payment_failed' },
  6: { name: 'SUBSCRIPTION_IN_GRACE_PERIOD', kind: 'grace_period' },
  7: { name: 'SUBSCRIPTION_RESTARTED', kind: 'subscription_updated' },
  8: { name: 'SUBSCRIPTION_PRICE_CHANGE_CONFIRMED', kind: 'subscription_updated' },
  9: { name: 'SUBSCRIPTION_DEFERRED', kind: 'subscription_updated' },
  10: { name: 'SUBSCRIPTION_PAUSED', kind: 'subscription_updated' },
  11: { name: 'SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED', kind: 'subscription_updated' },
  12: { name: 'SUBSCRIPTION_REVOKED', kind: 'refunded' },
  13: { name: 'SUBSCRIPTION_EXPIRED', kind: 'expired' },
  17: { name: 'SUBSCRIPTION_ITEMS_CHANGED', kind: 'subscription_updated' },
  18: { name: 'SUBSCRIPTION_CANCELLATION_SCHEDULED', kind: 'subscription_updated' },
  19: { name: 'SUBSCRIPTION_PRICE_CHANGE_UPDATED', kind: 'subscription_updated' },
  20: { name: 'SUBSCRIPTION_PENDING_PURCHASE_CANCELED', kind: 'subscription_canceled' },
  22: { name: 'SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED', kind: 'subscription_updated' },
};

const ONE_TIME_TYPES: Record<number, string> = { 1: 'ONE_TIME_PRODUCT_PURCHASED', 2: 'ONE_TIME_PRODUCT_CANCELED' };

export interface PubSubPush {
  message?: {
    data?: string;
    messageId?: string;
    message_id?: string;
    publishTime?: string;
    publish_time?: string;
    attributes?: Record<string, string>;
  };
  subscription?: string;
}

interface DeveloperNotification {
  version?: string;
  packageName?: string;
  eventTimeMillis?: string | number;
  subscriptionNotification?: {
    version?: string;
    notificationType?: number;
    purchaseToken?: string;
    subscriptionId?: string;
  };
  oneTimeProductNotification?: { version?: string; notificationType?: number; purchaseToken?: string; sku?: string };
  voidedPurchaseNotification?: { purchaseToken?: string; orderId?: string; productType?: number; refundType?: number };
  testNotification?: { version?: string };
}

export class MalformedPush extends Error {}

/**
 * A Pub/Sub push body → NormalisedEvent. RTDN carries no live/test flag: subscription events
 * are 'live' here and the mode is settled by the purchase lookup (testPurchase); only Play's
 * own test notification is 'test'.
 */
export function parsePush(rawBody: Buffer): NormalisedEvent {
  let push: PubSubPush;
  try {
    push = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new MalformedPush('body is not JSON');
  }
  const msg = push?.message;
  const id = msg?.messageId ?? msg?.message_id;
  if (!msg || typeof id !== 'string' || !id) throw new MalformedPush('no message.messageId');
  if (typeof msg.data !== 'string') throw new MalformedPush('no message.data');
  let n: DeveloperNotification;
  try {
    n = JSON.parse(Buffer.from(msg.data, 'base64').toString('utf8'));
  } catch {
    throw new MalformedPush('message.data is not base64 JSON');
  }
  if (!n || typeof n !== 'object') throw new MalformedPush('message.data is not a DeveloperNotification');
  const millis = Number(n.eventTimeMillis);
  const occurred =
    Number.isFinite(millis) && millis > 0
      ? new Date(millis)
      : new Date(msg.publishTime ?? msg.publish_time ?? Date.now());
  const base = {
    provider: 'store_android' as const,
    id,
    account_ref: typeof n.packageName === 'string' ? n.packageName : null,
    mode: 'live' as const,
    occurred_at: occurred.toISOString(),
    // `data` is the notification base64-encoded, purchase token included: only the decoded form is
    // kept, so the stored-payload redaction (which hides `*token*` keys) reaches the token.
    payload: { ...push, message: { ...msg, data: undefined, decoded: n } },
  };
  if (n.subscriptionNotification) {
    const s = n.subscriptionNotification;
    const known = SUBSCRIPTION_NOTIFICATION_TYPES[Number(s.notificationType)];
    return {
      ...base,
      type: known?.name ?? `SUBSCRIPTION_NOTIFICATION_${s.notificationType}`,
      kind: known?.kind ?? 'other',
      subscription_external_id: s.purchaseToken ?? null,
      sku: s.subscriptionId ?? null,
    };
  }
  if (n.voidedPurchaseNotification) {
    const v = n.voidedPurchaseNotification;
    return { ...base, type: 'VOIDED_PURCHASE', kind: 'refunded', subscription_external_id: v.purchaseToken ?? null };
  }
  if (n.oneTimeProductNotification) {
    const o = n.oneTimeProductNotification;
    return {
      ...base,
      type: ONE_TIME_TYPES[Number(o.notificationType)] ?? 'ONE_TIME_PRODUCT_NOTIFICATION',
      kind: 'other',
      sku: o.sku ?? null,
    };
  }
  if (n.testNotification) return { ...base, type: 'TEST_NOTIFICATION', kind: 'test', mode: 'test' };
  return { ...base, type: 'UNKNOWN_NOTIFICATION', kind: 'other' };
}
