import { Purchases } from '@revenuecat/purchases-js';
import { call } from './api';

/**
 * RevenueCat's own web SDK (`@revenuecat/purchases-js`, unmodified, from npm) configured as an
 * app would be, its `proxyURL` pointed at this service's `{API host}/revenuecat`; no analytics leave.
 */
export const stockPurchases = (proxyURL: string, apiKey: string, appUserId: string) =>
  Purchases.configure({
    apiKey,
    appUserId,
    // eventsURL: read by the SDK (not in its types); analytics are off and would come here anyway.
    httpConfig: { proxyURL, eventsURL: proxyURL } as { proxyURL: string },
    flags: { collectAnalyticsEvents: false },
  });

/**
 * `POST /v1/receipts` as RevenueCat's mobile SDKs send it, with the headers they add (read by
 * nobody here: the key decides the store).
 */
export const postReceipt = (proxyURL: string, key: string, body: Record<string, unknown>, platform: string) =>
  call(proxyURL, '/v1/receipts', key, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'X-Platform': platform, 'X-Version': '8.0.0', 'X-Is-Sandbox': 'false' },
  });

/**
 * The body RevenueCat/purchases-android builds for a Play purchase:
 * purchases/src/main/kotlin/com/revenuecat/purchases/common/Backend.kt (`postReceiptData`) at
 * commit 006d33378da05682909c24f7a76ed54acfe1631d: `fetch_token` (the Play purchase token),
 * `product_ids`, `platform_product_ids`, `app_user_id`, `is_restore`, `observer_mode`,
 * `purchase_completed_by`, `price`, `currency`, `attributes`, `initiation_source`, …
 */
export const androidReceiptBody = (
  token: string,
  user: string,
  productId = 'premium_monthly',
  basePlanId = 'monthly',
) => ({
  fetch_token: token,
  product_ids: [productId],
  platform_product_ids: [{ product_id: productId, base_plan_id: basePlanId }],
  app_user_id: user,
  is_restore: false,
  presented_offering_identifier: 'default',
  observer_mode: false,
  purchase_completed_by: 'revenuecat',
  sdk_originated: true,
  price: 9.99,
  currency: 'USD',
  attributes: { $email: { value: `${user}@example.test`, updated_at_ms: Date.now() } },
  normal_duration: 'P1M',
  initiation_source: 'purchase',
});

/**
 * The body RevenueCat/purchases-ios builds: Sources/Networking/Operations/PostReceiptDataOperation.swift
 * (`PostData.encode`) at commit 00e87f0e4f224b118db72e0b95641f66db50e557: `fetch_token` (with
 * StoreKit 2, the transaction's jwsRepresentation), `app_user_id`, `is_restore`, `observer_mode`,
 * `initiation_source`, the product's fields, `attributes`.
 */
export const iosReceiptBody = (jws: string, user: string, productId = 'premium_monthly') => ({
  fetch_token: jws,
  app_user_id: user,
  is_restore: false,
  observer_mode: false,
  initiation_source: 'purchase',
  product_id: productId,
  price: '9.99',
  currency: 'USD',
  presented_offering_identifier: 'default',
});
