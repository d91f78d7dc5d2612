import crypto from 'node:crypto';
import { deliver } from '../common/host';
import type { EmulatorStore, SendEventParams } from '../common/types';
import { pickAccount, type IosAccount } from './accounts';
import { signJws, type Pki } from './pki';
import {
  applyNotification,
  chainOf,
  familyChains,
  purchase,
  purchaseNonConsumable,
  shareWithFamily,
  signedRenewal,
  signedTransaction,
  transactions,
  type Environment,
  type RenewalState,
  type Transaction,
} from './transactions';

/** App Store Server Notifications V2 types the emulator can send. */
const TYPES = new Set([
  'SUBSCRIBED',
  'DID_CHANGE_RENEWAL_PREF',
  'DID_CHANGE_RENEWAL_STATUS',
  'OFFER_REDEEMED',
  'DID_RENEW',
  'EXPIRED',
  'DID_FAIL_TO_RENEW',
  'GRACE_PERIOD_EXPIRED',
  'PRICE_INCREASE',
  'REFUND',
  'REFUND_DECLINED',
  'CONSUMPTION_REQUEST',
  'RENEWAL_EXTENDED',
  'REVOKE',
  'TEST',
  'REFUND_REVERSED',
  'ONE_TIME_CHARGE',
]);

const DEFAULT_SUBTYPE: Record<string, string> = {
  SUBSCRIBED: 'INITIAL_BUY',
  DID_CHANGE_RENEWAL_STATUS: 'AUTO_RENEW_DISABLED',
  EXPIRED: 'VOLUNTARY',
};

export const DEFAULT_PRODUCT_ID = 'premium_monthly';

export interface IosEventParams extends SendEventParams {
  subtype?: string;
  mode?: 'test' | 'live';
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/**
 * `data` picks and shapes the subscription the notification is about:
 *  - originalTransactionId | transactionId (or snake_case): an existing purchase;
 *    otherwise a fresh one is bought first (productId | product_id, appAccountToken | app_user_id);
 *  - environment: 'Sandbox' (default, or mode 'test') | 'Production' (or mode 'live');
 *  - transaction / renewal: fields merged over the signed transaction / renewal info;
 *  - anything else is merged over the notification's `data` object.
 */
function resolveChain(
  store: EmulatorStore,
  account: IosAccount,
  env: Environment,
  data: Record<string, unknown>,
  type: string,
) {
  const id =
    str(data.originalTransactionId) ??
    str(data.original_transaction_id) ??
    str(data.transactionId) ??
    str(data.transaction_id);
  if (id) {
    const tx = transactions(store).find(
      (t) =>
        t.account === account.account &&
        t.environment === env &&
        (t.transactionId === id || t.originalTransactionId === id),
    );
    if (!tx) throw Object.assign(new Error(`no ${env} transaction ${id} for ${account.account}`), { status: 404 });
    return { chain: chainOf(store, tx), fresh: false };
  }
  const productId = str(data.productId) ?? str(data.product_id) ?? DEFAULT_PRODUCT_ID;
  const appUserId = str(data.appAccountToken) ?? str(data.app_user_id);
  return { chain: purchase(store, account, env, productId, appUserId), fresh: type === 'SUBSCRIBED' };
}

const SELECTORS = new Set([
  'originalTransactionId',
  'original_transaction_id',
  'transactionId',
  'transaction_id',
  'productId',
  'product_id',
  'appAccountToken',
  'app_user_id',
  'transaction',
  'renewal',
  'subtype',
  'environment',
]);

export async function sendEvent(
  store: EmulatorStore,
  pki: Pki,
  params: IosEventParams,
): Promise<{ id: string; status: number; family?: { id: string; status: number }[] }> {
  const account = pickAccount(store, params.account);
  const chainKeys = params.signature === 'bad' ? pki.untrusted : pki.trusted;
  if (params.id) {
    // A redelivery: the same notification (same UUID and payload), as Apple retries it.
    const prev = store.find('notifications', (n) => n.id === params.id && n.account === account.account);
    if (prev && params.signature !== 'bad') {
      const status = await deliver(params.target, JSON.stringify({ signedPayload: prev.signedPayload }), {});
      prev.deliveries = (prev.deliveries as number) + 1;
      prev.last_status = status;
      store.save();
      return { id: params.id, status };
    }
  }
  const type = params.type;
  if (!TYPES.has(type)) throw Object.assign(new Error(`unknown notificationType ${type}`), { status: 400 });
  const data = params.data ?? {};
  const subtype = str(params.subtype) ?? str(data.subtype) ?? DEFAULT_SUBTYPE[type];
  const env: Environment =
    data.environment === 'Production' || (data.environment === undefined && params.mode === 'live')
      ? 'Production'
      : 'Sandbox';

  let resolved: ReturnType<typeof resolveChain>['chain'] | undefined;
  const body: Record<string, unknown> = {
    bundleId: account.bundle_id,
    bundleVersion: '1.0',
    environment: env,
    ...(env === 'Production' ? { appAppleId: Number(account.app_id) } : {}),
  };
  if (type !== 'TEST') {
    const { chain, fresh } = resolveChain(store, account, env, data, type);
    resolved = chain;
    if (!fresh) applyNotification(store, account, chain, type, subtype, str(data.productId) ?? str(data.product_id));
    const state = chain.state as RenewalState;
    const latest = transactions(store).find(
      (t) => t.account === account.account && t.transactionId === state.latestTransactionId,
    ) as Transaction;
    body.signedTransactionInfo = signedTransaction(
      chainKeys,
      latest,
      (data.transaction as Record<string, unknown>) ?? {},
    );
    body.signedRenewalInfo = signedRenewal(chainKeys, state, latest, (data.renewal as Record<string, unknown>) ?? {});
    body.status = state.status;
  }
  for (const [k, v] of Object.entries(data)) if (!SELECTORS.has(k)) body[k] = v;

  const notificationUUID = params.id ?? crypto.randomUUID();
  const payload = {
    notificationType: type,
    ...(subtype ? { subtype } : {}),
    notificationUUID,
    data: body,
    version: '2.0',
    signedDate: Date.now(),
  };
  const signedPayload = signJws(chainKeys, payload);
  const status = await deliver(params.target, JSON.stringify({ signedPayload }), {});
  if (params.signature !== 'bad') {
    store.insert('notifications', {
      id: notificationUUID,
      account: account.account,
      type,
      subtype: subtype ?? null,
      target: params.target,
      signedPayload,
      deliveries: 1,
      last_status: status,
    });
  }
  // Family Sharing follows the purchaser: a refund or revocation of theirs revokes every family
  // member's access, and the App Store tells each member's app with REVOKE.
  const family =
    resolved && !resolved.state.familyOf && (type === 'REFUND' || type === 'REVOKE') && params.signature !== 'bad'
      ? familyChains(store, resolved.state)
      : [];
  const sent: { id: string; status: number }[] = [];
  for (const member of family) {
    sent.push(
      await sendEvent(store, pki, {
        type: 'REVOKE',
        target: params.target,
        account: account.account,
        data: { originalTransactionId: member.state.originalTransactionId, environment: env },
      }),
    );
  }
  return { id: notificationUUID, status, ...(sent.length ? { family: sent } : {}) };
}

/**
 * POST /__control/family-share `{original_transaction_id, account?}`: the purchaser shares the
 * subscription with a family member, whose device then holds its own FAMILY_SHARED transaction;
 * answers what StoreKit hands the member's app.
 */
export function familyShare(store: EmulatorStore, pki: Pki, params: Record<string, unknown>): Record<string, unknown> {
  const account = pickAccount(store, params.account);
  const id = str(params.original_transaction_id);
  if (!id) throw Object.assign(new Error('original_transaction_id is required'), { status: 400 });
  const tx = transactions(store).find(
    (t) => t.account === account.account && (t.transactionId === id || t.originalTransactionId === id),
  );
  if (!tx) throw Object.assign(new Error(`no transaction ${id} for ${account.account}`), { status: 404 });
  const member = shareWithFamily(store, chainOf(store, tx));
  return {
    transaction_id: member.latest.transactionId,
    signed_transaction: signedTransaction(pki.trusted, member.latest),
  };
}

/**
 * A sandbox tester buys `product_id` on a device: records a Sandbox purchase and answers
 * what StoreKit hands the app (transaction id and the signed transaction). With `target`,
 * the SUBSCRIBED notification goes there too, as Apple sends it to the sandbox URL.
 * `product_type` is Apple's (`AUTO_RENEWABLE`, the default, or `NON_CONSUMABLE`); `customer`
 * names the Apple Account that buys (the same one for several purchases on one device; by
 * default each purchase is its own); `environment: 'Production'` records a real purchase instead
 * (what the live key sees).
 */
export async function sandboxPurchase(
  store: EmulatorStore,
  pki: Pki,
  params: {
    product_id?: unknown;
    app_user_id?: unknown;
    account?: unknown;
    target?: unknown;
    product_type?: unknown;
    customer?: unknown;
    environment?: unknown;
  },
): Promise<Record<string, unknown>> {
  const productId = str(params.product_id);
  if (!productId) throw Object.assign(new Error('product_id is required'), { status: 400 });
  const type = str(params.product_type) ?? 'AUTO_RENEWABLE';
  if (type !== 'AUTO_RENEWABLE' && type !== 'NON_CONSUMABLE')
    throw Object.assign(new Error('product_type must be AUTO_RENEWABLE or NON_CONSUMABLE'), { status: 400 });
  const env = str(params.environment) ?? 'Sandbox';
  if (env !== 'Sandbox' && env !== 'Production')
    throw Object.assign(new Error('environment must be Sandbox or Production'), { status: 400 });
  const account = pickAccount(store, params.account);
  const customer = str(params.customer);
  if (type === 'NON_CONSUMABLE') {
    const tx = purchaseNonConsumable(store, account, env, productId, str(params.app_user_id), customer);
    return { transaction_id: tx.transactionId, signed_transaction: signedTransaction(pki.trusted, tx) };
  }
  const { latest } = purchase(store, account, env, productId, str(params.app_user_id), customer);
  const out: Record<string, unknown> = {
    transaction_id: latest.transactionId,
    signed_transaction: signedTransaction(pki.trusted, latest),
  };
  const target = str(params.target);
  if (target) {
    out.notification = await sendEvent(store, pki, {
      type: 'SUBSCRIBED',
      subtype: 'INITIAL_BUY',
      target,
      account: account.account,
      data: { originalTransactionId: latest.transactionId },
    });
  }
  return out;
}
