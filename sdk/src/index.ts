export { Billing, MAX_WAIT_MS } from './billing.js';
export { appAccountTokenFor } from './app-account-token.js';
export { BillingError, BILLING_ERROR_CODES, isBillingError, type BillingErrorCode } from './errors.js';
export { routeCheckout, type Lane } from './routing.js';
export { MemoryStorage } from './storage.js';
export {
  verifyEntitlementToken,
  ed25519Available,
  EntitlementTokenError,
  type EntitlementTokenClaims,
  type TokenFailure,
  type VerifyTokenOptions,
  type PublicJwk,
} from './token.js';
export { DEFAULT_TTL_SECONDS, TRIAL_TTL_SECONDS } from './cache.js';
export * from './types.js';
