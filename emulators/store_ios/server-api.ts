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
} from './transactions';

/**
 * The App Store Server API subset: Get Transaction Info and Get All Subscription Statuses,
 * with Apple's `{ errorCode, errorMessage }` errors. The key's mode picks the environment,
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
  m = /^\/inApps\/v1\/subscriptions\/([^/]+)$/.exec(ctx.path);
  if (m) {
    const tx = lookup(store, caller, decodeURIComponent(m[1]));
    const env = envOf(caller);
    const { state } = chainOf(store, tx);
    // "All of a customer's subscriptions in your app": chains of the same customer (appAccountToken), else this one.
    const chains = renewalStates(store).filter(
      (s) =>
        s.account === tx.account &&
        s.environment === env &&
        (s.originalTransactionId === state.originalTransactionId ||
          (state.appAccountToken && s.appAccountToken === state.appAccountToken)),
    );
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
