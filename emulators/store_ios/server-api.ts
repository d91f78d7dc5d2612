import type Koa from 'koa';
import type { EmulatorStore } from '../common/types';
import type { Caller } from './auth';
import { ServerApiError } from './http';
import type { Chain } from './pki';
import {
  chainOf,
  findTransaction,
  renewalStates,
  signedRenewal,
  signedTransaction,
  transactions,
  type Environment,
  type Transaction,
} from './transactions';

/**
 * The App Store Server API subset: Get Transaction Info, Get All Subscription Statuses and Get
 * Transaction History (v2), with Apple's `{ errorCode, errorMessage }` errors. The key's mode picks the environment,
 * as Apple's two hosts do: the test key sees Sandbox, the live key Production.
 */
const TRANSACTION_ID = /^\d{1,20}$/;

function envOf(caller: Caller): Environment {
  return caller.mode === 'test' ? 'Sandbox' : 'Production';
}

function lookup(store: EmulatorStore, caller: Caller, id: string) {
  if (!TRANSACTION_ID.test(id)) throw new ServerApiError(400, 4000006, 'Invalid transaction id.');
  const tx = findTransaction(store, caller.account.account, envOf(caller), id);
  if (!tx) throw new ServerApiError(404, 4040010, 'Transaction id not found.');
  return tx;
}

/** Apple's product types as Get Transaction History's `productType` names them. */
const PRODUCT_TYPE: Record<Transaction['type'], string> = {
  'Auto-Renewable Subscription': 'AUTO_RENEWABLE',
  'Non-Consumable': 'NON_CONSUMABLE',
};
/** Apple answers at most 20 signed transactions a page. */
const HISTORY_PAGE = 20;

/** The revision is Apple's opaque paging token: here, where the next page starts. */
const revisionAt = (offset: number) => Buffer.from(`o:${offset}`).toString('base64url');
function offsetOf(revision: string | null): number {
  if (revision === null) return 0;
  const m = /^o:(\d{1,9})$/.exec(Buffer.from(revision, 'base64url').toString('utf8'));
  if (!m) throw new ServerApiError(400, 4000005, 'Invalid request revision.');
  return Number(m[1]);
}

/** Same customer: the Apple Account that bought them (a purchase from before accounts were kept: its own chain). */
const sameCustomer = (a: Transaction, b: Transaction) =>
  a.customer === undefined || b.customer === undefined
    ? a.originalTransactionId === b.originalTransactionId
    : a.customer === b.customer;

/**
 * Get Transaction History (v2): `GET /inApps/v2/history/{transactionId}`, every in-app purchase
 * of the customer who made this transaction, in this app and environment, 20 a page. Query:
 * `revision` (the previous page's), `sort` (ASCENDING, the default, or DESCENDING by purchase
 * date), `startDate`/`endDate` (ms), `productId`, `productType`, `subscriptionGroupIdentifier`
 * (each repeatable), `inAppOwnershipType`, `revoked`. Answers `{revision, hasMore, bundleId,
 * appAppleId (Production only), environment, signedTransactions}`.
 */
function history(store: EmulatorStore, pki: () => Chain, ctx: Koa.Context, caller: Caller, id: string) {
  const tx = lookup(store, caller, id);
  const env = envOf(caller);
  const q = new URLSearchParams(ctx.querystring);
  const sort = q.get('sort') ?? 'ASCENDING';
  if (sort !== 'ASCENDING' && sort !== 'DESCENDING') throw new ServerApiError(400, 4000021, 'Invalid sort.');
  const dateOf = (name: string, code: number) => {
    const v = q.get(name);
    if (v === null) return undefined;
    if (!/^\d{1,15}$/.test(v)) throw new ServerApiError(400, code, `Invalid ${name}.`);
    return Number(v);
  };
  const start = dateOf('startDate', 4000015);
  const end = dateOf('endDate', 4000016);
  const types = q.getAll('productType');
  if (types.some((t) => !['AUTO_RENEWABLE', 'NON_RENEWABLE', 'CONSUMABLE', 'NON_CONSUMABLE'].includes(t)))
    throw new ServerApiError(400, 4000022, 'Invalid product type.');
  const products = q.getAll('productId');
  const groups = q.getAll('subscriptionGroupIdentifier');
  const ownership = q.get('inAppOwnershipType');
  const revoked = q.get('revoked');
  const offset = offsetOf(q.get('revision'));
  const all = transactions(store)
    .filter(
      (t) =>
        t.account === tx.account &&
        t.environment === env &&
        sameCustomer(t, tx) &&
        (start === undefined || t.purchaseDate >= start) &&
        (end === undefined || t.purchaseDate < end) &&
        (!types.length || types.includes(PRODUCT_TYPE[t.type])) &&
        (!products.length || products.includes(t.productId)) &&
        (!groups.length || groups.includes(String(t.subscriptionGroupIdentifier))) &&
        (ownership === null || t.inAppOwnershipType === ownership) &&
        (revoked === null || (t.revocationDate !== undefined) === (revoked === 'true')),
    )
    .sort((a, b) =>
      sort === 'ASCENDING'
        ? a.purchaseDate - b.purchaseDate || a.transactionId.localeCompare(b.transactionId)
        : b.purchaseDate - a.purchaseDate || b.transactionId.localeCompare(a.transactionId),
    );
  const page = all.slice(offset, offset + HISTORY_PAGE);
  ctx.body = {
    revision: revisionAt(offset + page.length),
    hasMore: offset + page.length < all.length,
    bundleId: caller.account.bundle_id,
    ...(env === 'Production' ? { appAppleId: Number(caller.account.app_id) } : {}),
    environment: env,
    signedTransactions: page.map((t) => signedTransaction(pki(), t)),
  };
}

export async function handleServerApi(
  store: EmulatorStore,
  pki: () => Chain,
  ctx: Koa.Context,
  caller: Caller,
): Promise<boolean> {
  if (ctx.method !== 'GET') return false;
  let m = /^\/inApps\/v1\/transactions\/([^/]+)$/.exec(ctx.path);
  if (m) {
    const tx = lookup(store, caller, decodeURIComponent(m[1]));
    ctx.body = { signedTransactionInfo: signedTransaction(pki(), tx) };
    return true;
  }
  m = /^\/inApps\/v2\/history\/([^/]+)$/.exec(ctx.path);
  if (m) {
    history(store, pki, ctx, caller, decodeURIComponent(m[1]));
    return true;
  }
  m = /^\/inApps\/v1\/subscriptions\/([^/]+)$/.exec(ctx.path);
  if (m) {
    const tx = lookup(store, caller, decodeURIComponent(m[1]));
    const env = envOf(caller);
    // A non-consumable's transaction names its customer too; it has no chain of its own.
    const state = tx.type === 'Auto-Renewable Subscription' ? chainOf(store, tx).state : undefined;
    const firstOf = (s: { originalTransactionId: string }) =>
      transactions(store).find((t) => t.account === tx.account && t.transactionId === s.originalTransactionId);
    // "All of a customer's subscriptions in your app": chains of the same customer (the Apple Account, or the
    // appAccountToken), else this one.
    const chains = renewalStates(store).filter((s) => {
      if (s.account !== tx.account || s.environment !== env) return false;
      if (state && s.originalTransactionId === state.originalTransactionId) return true;
      if (state?.appAccountToken && s.appAccountToken === state.appAccountToken) return true;
      const first = firstOf(s);
      return first !== undefined && first.customer !== undefined && first.customer === tx.customer;
    });
    const wanted = new URLSearchParams(ctx.querystring).getAll('status').map(Number);
    const groups = new Map<string, Record<string, unknown>[]>();
    for (const s of chains) {
      if (wanted.length && !wanted.includes(s.status)) continue;
      const latest = transactions(store).find(
        (t) => t.account === s.account && t.transactionId === s.latestTransactionId,
      )!;
      const list = groups.get(latest.subscriptionGroupIdentifier) ?? [];
      list.push({
        originalTransactionId: s.originalTransactionId,
        status: s.status,
        signedTransactionInfo: signedTransaction(pki(), latest),
        signedRenewalInfo: signedRenewal(pki(), s, latest),
      });
      groups.set(latest.subscriptionGroupIdentifier, list);
    }
    ctx.body = {
      environment: env,
      bundleId: caller.account.bundle_id,
      // Apple names the app's Apple ID only in Production.
      ...(env === 'Production' ? { appAppleId: Number(caller.account.app_id) } : {}),
      data: [...groups].map(([subscriptionGroupIdentifier, lastTransactions]) => ({
        subscriptionGroupIdentifier,
        lastTransactions,
      })),
    };
    return true;
  }
  return false;
}
