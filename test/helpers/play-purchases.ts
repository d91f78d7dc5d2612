import type { StoreStack } from './stores';
import { testDb } from './db';
import { until } from './until';

/**
 * Play purchases on a store stack, as the restore and alias suites make them: a sandbox purchase of
 * `premium_monthly` the emulator names `user` as the buyer of, its registration with the pk_test_ key,
 * and the store's notifications about it, each awaited until processed. `stack` is asked at each call, so a
 * suite takes these before its stack has started (in `beforeAll`).
 */
export function playPurchases(stack: () => StoreStack) {
  const buy = async (user: string) =>
    (
      await stack().control.store_android<{ purchase_token: string }>('POST', '/sandbox-purchase', {
        product_id: 'premium_monthly',
        account: stack().accounts.store_android,
        app_user_id: user,
      })
    ).purchase_token;
  const register = (user: string, token: string) =>
    stack().register({
      app_user_id: user,
      provider: 'store_android',
      product_id: 'premium_monthly',
      purchase_token: token,
    });
  /** The emulator sends a real-time developer notification about the purchase to the service's webhook. */
  const notify = (type: string, token: string) =>
    stack().control.store_android<{ id: string; status: number }>('POST', '/events', {
      type,
      target: `${stack().api.dashboardRoot}/api/webhooks/store_android`,
      account: stack().accounts.store_android,
      data: { purchaseToken: token },
    });
  const processed = (id: string) =>
    until(
      'the notification processed',
      () => testDb()('webhook_deliveries').where({ provider: 'store_android', event_id: id }).first(),
      (d) => d?.status === 'processed',
    );
  return { buy, register, notify, processed };
}
