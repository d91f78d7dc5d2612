import type Router from '@koa/router';
import { validAppUserId } from '../../domain/revenuecat';
import { assertNoNulBytes } from '../../operations/input-rules';
import { ApiError, invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { readJsonObject } from '../json-body';
import { transactionIdOfAppReceipt } from '../../providers/store_ios/app-receipt';
import {
  registerStorePurchaseFor,
  storePurchaseBody,
  type StorePurchaseBody,
  type StoreRegistration,
} from '../sdk/store-purchases';
import { registerAppReceipt } from './app-receipt';
import { admitRevenueCat } from './auth';
import { parseAttributes, storeAttributes } from './attributes';
import { customerInfo } from './customer-info';

const JWS_RE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** The SDK body's own checks (api/sdk/store-purchases.ts), the refusal naming `fetch_token`. */
function checked(body: Record<string, unknown>): StorePurchaseBody {
  const parsed = storePurchaseBody.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw invalidRequest(`${issue.path.join('.')} ${issue.message}`, 'fetch_token');
}

/** The transaction a StoreKit 1 app receipt names, or RevenueCat's invalid-receipt refusal (7103). */
function appReceiptTransaction(receipt: string): string {
  const id = transactionIdOfAppReceipt(receipt);
  if (id === null)
    throw new ApiError(
      400,
      'invalid_purchase',
      'fetch_token is neither a StoreKit 2 transaction’s jwsRepresentation nor an app receipt holding a purchase.',
    );
  return id;
}

/**
 * POST /v1/receipts: RevenueCat's SDKs post a purchase here. The key says which store (a `goog_`
 * key: Play, a `appl_` key: the App Store; the `X-Platform` header is read by nobody), and the
 * purchase goes through our one store registration (api/sdk/store-purchases.ts
 * registerStorePurchaseFor: the same checks, limits, provisional access and verdict as
 * POST /v1/sdk/store-purchases). Answers the app user's customer info.
 *
 * - Android: `fetch_token` is the Play purchase token, `product_ids[0]` the store product id.
 * - iOS: `fetch_token` is a StoreKit 2 transaction's `jwsRepresentation`, or a StoreKit 1 app
 *   receipt (base64, no dots): the receipt is not believed, one transaction id is taken out of it
 *   (providers/store_ios/app-receipt.ts) and every purchase of that customer is read from the App
 *   Store's transaction history and registered (./app-receipt.ts), as RevenueCat does with a
 *   restore. One that names no purchase, or garbage, is RevenueCat's invalid-receipt code (7103),
 *   as is a transaction Apple does not know for this app (another app's receipt).
 * - Web keys: purchases made on the web reach the service from the payment provider, not here.
 *
 * Everything else the SDKs send (`is_restore`, `observer_mode`, prices, offering ids, …) is read
 * by nobody: the store's own answer is what counts. `attributes`, when sent, are stored as by
 * POST /v1/subscribers/{id}/attributes.
 */
export function registerReceipts(router: Router, services: Services): void {
  router.post('/v1/receipts', async (ctx) => {
    const actor = await admitRevenueCat(ctx, services);
    const raw = await readJsonObject(ctx);
    assertNoNulBytes(raw);
    const appUserId = raw.app_user_id;
    if (!validAppUserId(appUserId)) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    const token = raw.fetch_token;
    if (typeof token !== 'string' || token.length === 0) throw invalidRequest('fetch_token is required', 'fetch_token');
    let registration: StoreRegistration | { app_receipt_transaction: string };
    if (actor.platform === 'android') {
      const productIds = raw.product_ids;
      const productId = Array.isArray(productIds) ? productIds[0] : undefined;
      if (typeof productId !== 'string' || productId.trim() === '')
        throw invalidRequest('product_ids must name the purchased product', 'product_ids');
      registration = checked({
        provider: 'store_android',
        app_user_id: appUserId,
        product_id: productId,
        purchase_token: token,
      });
    } else if (actor.platform === 'ios') {
      registration = JWS_RE.test(token)
        ? checked({ provider: 'store_ios', app_user_id: appUserId, signed_transaction: token })
        : { app_receipt_transaction: appReceiptTransaction(token) };
    } else {
      throw new ApiError(
        400,
        'invalid_platform',
        'Web purchases reach the service from the payment provider; post store purchases with the app’s appl_ or goog_ key.',
      );
    }
    // The attributes the mobile SDKs send along (unsynced ones): checked before the purchase, kept after it.
    const attributes = raw.attributes === undefined || raw.attributes === null ? [] : parseAttributes(raw);
    if ('app_receipt_transaction' in registration) {
      const done = await registerAppReceipt(services, actor, appUserId, registration.app_receipt_transaction, ctx.ip);
      // Counts only: which purchases were left to the notifications is the store's to say again.
      if (done.leftOut || done.refused)
        ctx.state.log?.info(
          { registered: done.registered, refused: done.refused, left_out: done.leftOut },
          'app receipt: some of its purchases were not registered',
        );
    } else {
      await registerStorePurchaseFor(services, actor, registration, ctx.ip);
    }
    if (attributes.length) await storeAttributes(services, actor.tenantId, appUserId, attributes);
    ctx.body = await customerInfo(services.db, actor, appUserId);
  });
}
