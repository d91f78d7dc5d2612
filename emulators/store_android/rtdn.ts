import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import type { EmulatorStore, SendEventParams } from '../common/types';
import { deliver } from '../common/host';
import type { AccountRecord, Accounts } from './accounts';
import type { EmulatorKeys } from './keys';
import type { Purchases } from './purchases';

/**
 * SubscriptionNotification.notificationType by name. Kept apart from the adapter's own table
 * on purpose: the emulator stands for Google, so a misreading in the adapter must show up.
 */
const SUBSCRIPTION_TYPES: Record<string, number> = {
  SUBSCRIPTION_RECOVERED: 1,
  SUBSCRIPTION_RENEWED: 2,
  SUBSCRIPTION_CANCELED: 3,
  SUBSCRIPTION_PURCHASED: 4,
  SUBSCRIPTION_ON_HOLD: 5,
  SUBSCRIPTION_IN_GRACE_PERIOD: 6,
  SUBSCRIPTION_RESTARTED: 7,
  SUBSCRIPTION_PRICE_CHANGE_CONFIRMED: 8,
  SUBSCRIPTION_DEFERRED: 9,
  SUBSCRIPTION_PAUSED: 10,
  SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED: 11,
  SUBSCRIPTION_REVOKED: 12,
  SUBSCRIPTION_EXPIRED: 13,
  SUBSCRIPTION_ITEMS_CHANGED: 17,
  SUBSCRIPTION_CANCELLATION_SCHEDULED: 18,
  SUBSCRIPTION_PRICE_CHANGE_UPDATED: 19,
  SUBSCRIPTION_PENDING_PURCHASE_CANCELED: 20,
  SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED: 22,
};
const TOP_LEVEL = ['version', 'packageName', 'eventTimeMillis'];

type Resolved = { kind: 'subscription'; name: string; code: number } | { kind: 'test' } | { kind: 'voided' };

/** Accepts Play's names (SUBSCRIPTION_RENEWED), dotted aliases (subscription.renewed), short names and numbers. */
export function resolveType(type: string): Resolved {
  const up = type
    .trim()
    .toUpperCase()
    .replace(/[.\-\s]+/g, '_')
    .replace('CANCELLED', 'CANCELED');
  if (up === 'TEST' || up === 'TEST_NOTIFICATION') return { kind: 'test' };
  if (['VOIDED', 'VOIDED_PURCHASE', 'REFUND', 'REFUNDED'].includes(up)) return { kind: 'voided' };
  if (/^\d+$/.test(up)) {
    const name = Object.keys(SUBSCRIPTION_TYPES).find((k) => SUBSCRIPTION_TYPES[k] === Number(up));
    if (name) return { kind: 'subscription', name, code: Number(up) };
  }
  const name = up.startsWith('SUBSCRIPTION_') ? up : `SUBSCRIPTION_${up}`;
  const code = SUBSCRIPTION_TYPES[name];
  if (!code)
    throw Object.assign(
      new Error(
        `unknown RTDN type ${type}; use one of ${Object.keys(SUBSCRIPTION_TYPES).join(', ')}, TEST_NOTIFICATION, VOIDED_PURCHASE`,
      ),
      { status: 400 },
    );
  return { kind: 'subscription', name, code };
}

/** Pub/Sub message ids are decimal strings. */
const messageId = () => BigInt(`0x${crypto.randomBytes(7).toString('hex')}`).toString();

interface MessageRow extends Record<string, unknown> {
  id: string;
  account: string;
  type: string;
  data: string;
  publishTime: string;
}

export function rtdn(store: EmulatorStore, accts: Accounts, keys: EmulatorKeys, buys: Purchases) {
  function notification(
    account: AccountRecord,
    type: Resolved,
    data: Record<string, unknown>,
  ): { name: string; body: Record<string, unknown> } {
    const top: Record<string, unknown> = {
      version: '1.0',
      packageName: account.account,
      eventTimeMillis: String(Date.now()),
    };
    const inner: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(data)) (TOP_LEVEL.includes(k) ? top : inner)[k] = v;
    if (type.kind === 'test')
      return { name: 'TEST_NOTIFICATION', body: { ...top, testNotification: { version: '1.0', ...inner } } };
    const latest = buys.latest(account.account);
    const token =
      typeof inner.purchaseToken === 'string'
        ? inner.purchaseToken
        : (latest?.token ?? `emulated-${crypto.randomBytes(16).toString('hex')}`);
    const purchase = buys.find(account.account, token);
    if (type.kind === 'voided') {
      if (purchase) buys.applyNotification(purchase, 'VOIDED_PURCHASE');
      const voided = {
        purchaseToken: token,
        orderId: purchase?.orderId ?? 'GPA.0000-0000-0000-00000',
        productType: 1,
        refundType: 1,
        ...inner,
      };
      return { name: 'VOIDED_PURCHASE', body: { ...top, voidedPurchaseNotification: voided } };
    }
    if (purchase) buys.applyNotification(purchase, type.name);
    const sub = {
      version: '1.0',
      notificationType: type.code,
      purchaseToken: token,
      subscriptionId: purchase?.productId ?? 'premium_monthly',
      ...inner,
    };
    return { name: type.name, body: { ...top, subscriptionNotification: sub } };
  }

  /** The OIDC token Pub/Sub puts on a push: Google-issued, audience = the subscription's configured audience. */
  async function oidcToken(account: AccountRecord, bad: boolean): Promise<string> {
    const key = bad ? keys.wrongKey() : keys.oidcKey();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      azp: account.push_service_account_id,
      email: account.push_service_account_email,
      email_verified: true,
    })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer('https://accounts.google.com')
      .setAudience(account.webhook_secret)
      .setSubject(account.push_service_account_id)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key.privateKey);
  }

  return {
    /** POST /__control/events: one RTDN as a Pub/Sub push; a reused id redelivers the same message. */
    async sendEvent(params: SendEventParams): Promise<{ id: string; status: number }> {
      const account = accts.resolve(params.account);
      let msg = params.id
        ? (store.find('messages', (m) => m.id === params.id && m.account === account.account) as MessageRow | undefined)
        : undefined;
      if (!msg) {
        const { name, body } = notification(account, resolveType(params.type), params.data ?? {});
        msg = store.insert('messages', {
          id: params.id ?? messageId(),
          account: account.account,
          type: name,
          data: Buffer.from(JSON.stringify(body)).toString('base64'),
          publishTime: new Date().toISOString(),
        } satisfies MessageRow);
      }
      const push = {
        message: {
          data: msg.data,
          messageId: msg.id,
          message_id: msg.id,
          publishTime: msg.publishTime,
          publish_time: msg.publishTime,
        },
        subscription: `projects/${account.project_id}/subscriptions/play-rtdn-push`,
      };
      const token = await oidcToken(account, params.signature === 'bad');
      const status = await deliver(params.target, JSON.stringify(push), {
        authorization: `Bearer ${token}`,
        'user-agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)',
      });
      return { id: msg.id, status };
    },
  };
}
