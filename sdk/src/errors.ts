/**
 * Every failure the SDK reports is a BillingError with a stable code, so an app can
 * branch on `error.code` instead of parsing messages. Errors coming from the service
 * keep the service's own code (`serviceCode`) and HTTP status next to the SDK's.
 */
export const BILLING_ERROR_CODES = [
  'invalid_config', // configure() was given something unusable
  'network_unavailable', // the service could not be reached and nothing is cached
  'service_error', // the service answered with its Error shape (see serviceCode/status)
  'invalid_response', // the service answered something that is not the documented shape
  'store_product_id_missing', // Android digital product without a store product id: never the browser
  'store_billing_unavailable', // Android digital checkout without storeBilling or its foreground activity
  'store_purchase_failed', // the store billing flow threw
  'purchase_registration_failed', // POST /v1/sdk/store-purchases refused the purchase
  'checkout_unavailable', // no payment link for the plan, or no way to open a browser tab
] as const;
export type BillingErrorCode = (typeof BILLING_ERROR_CODES)[number];

export class BillingError extends Error {
  constructor(
    readonly code: BillingErrorCode,
    message: string,
    readonly details: { status?: number; serviceCode?: string; cause?: unknown } = {},
  ) {
    super(`${code}: ${message}`);
    this.name = 'BillingError';
  }
  get status(): number | undefined {
    return this.details.status;
  }
  get serviceCode(): string | undefined {
    return this.details.serviceCode;
  }
}

export function isBillingError(e: unknown): e is BillingError {
  return e instanceof BillingError;
}
