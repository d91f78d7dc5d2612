import {
  Environment,
  type JWSRenewalInfoDecodedPayload,
  type JWSTransactionDecodedPayload,
  type ResponseBodyV2DecodedPayload,
} from '@apple/app-store-server-library';
import { WebhookVerificationError } from '../errors';
import type { NormalisedEvent, CanonicalEventKind, WebhookInput } from '../types';
import { PROVIDER } from './errors';
import { peekJws, verificationReason, verifierFor, type VerifierConfig } from './signed-data';

/**
 * Server Notifications V2 type (+ subtype) → our kind. Access-ending events are `expired`
 * (REVOKE: Family Sharing access withdrawn) or `refunded`; a customer turning auto-renew off
 * is `subscription_canceled` (access lasts until current_period_end).
 */
export function notificationKind(type: string, subtype?: string | null): CanonicalEventKind {
  switch (type) {
    case 'SUBSCRIBED':
      return 'subscription_created';
    case 'DID_RENEW':
      return 'renewed';
    case 'DID_FAIL_TO_RENEW':
      return subtype === 'GRACE_PERIOD' ? 'grace_period' : 'payment_failed';
    case 'EXPIRED':
    case 'GRACE_PERIOD_EXPIRED':
    case 'REVOKE':
      return 'expired';
    case 'REFUND':
      return 'refunded';
    case 'DID_CHANGE_RENEWAL_STATUS':
      return subtype === 'AUTO_RENEW_DISABLED' ? 'subscription_canceled' : 'subscription_updated';
    case 'DID_CHANGE_RENEWAL_PREF':
    case 'OFFER_REDEEMED':
    case 'RENEWAL_EXTENDED':
    case 'REFUND_REVERSED':
    case 'PRICE_INCREASE':
      return 'subscription_updated';
    case 'ONE_TIME_CHARGE':
      return 'payment_succeeded';
    case 'TEST':
      return 'test';
    default:
      return 'other';
  }
}

const iso = (ms: number | undefined | null) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

function parseBody(raw: Buffer): string {
  try {
    const body = JSON.parse(raw.toString('utf8')) as { signedPayload?: unknown };
    if (typeof body?.signedPayload === 'string' && body.signedPayload) return body.signedPayload;
  } catch {
    // fall through
  }
  throw new WebhookVerificationError(PROVIDER, 'body is not {"signedPayload": "<JWS>"}');
}

/**
 * Verify an App Store Server Notification V2 and normalise it. The signature is the x5c
 * chain up to a trusted root, checked by the official SignedDataVerifier; the bundle id and
 * environment to check against come from the (not yet trusted) payload, then are enforced by
 * the verifier. Only Sandbox and Production are accepted: the library skips signature checks
 * for Xcode and LocalTesting, so a forged payload could otherwise claim those.
 */
export async function verifyNotification(input: WebhookInput, cfg: VerifierConfig): Promise<NormalisedEvent> {
  const signedPayload = parseBody(input.rawBody);
  const peek = peekJws(signedPayload) as ResponseBodyV2DecodedPayload;
  const app = (peek.data ?? peek.summary ?? peek.appData ?? peek.externalPurchaseToken ?? {}) as {
    bundleId?: unknown;
    environment?: unknown;
    appAppleId?: unknown;
  };
  const environment = app.environment ?? (peek.externalPurchaseToken ? Environment.PRODUCTION : undefined);
  if (environment !== Environment.SANDBOX && environment !== Environment.PRODUCTION) {
    throw new WebhookVerificationError(
      PROVIDER,
      `environment must be Sandbox or Production, got ${String(environment)}`,
    );
  }
  if (typeof app.bundleId !== 'string' || !app.bundleId)
    throw new WebhookVerificationError(PROVIDER, 'notification names no bundleId');
  // Production verification also pins the app's Apple ID; routing by bundle id happens at the caller.
  const appAppleId = typeof app.appAppleId === 'number' ? app.appAppleId : undefined;
  if (environment === Environment.PRODUCTION && appAppleId === undefined) {
    throw new WebhookVerificationError(PROVIDER, 'production notification names no appAppleId');
  }
  const verifier = verifierFor(cfg, environment, app.bundleId, appAppleId);

  let decoded: ResponseBodyV2DecodedPayload;
  let transaction: JWSTransactionDecodedPayload | undefined;
  let renewal: JWSRenewalInfoDecodedPayload | undefined;
  try {
    decoded = await verifier.verifyAndDecodeNotification(signedPayload);
    if (decoded.data?.signedTransactionInfo)
      transaction = await verifier.verifyAndDecodeTransaction(decoded.data.signedTransactionInfo);
    if (decoded.data?.signedRenewalInfo)
      renewal = await verifier.verifyAndDecodeRenewalInfo(decoded.data.signedRenewalInfo);
  } catch (err) {
    throw new WebhookVerificationError(PROVIDER, verificationReason(err));
  }
  if (!decoded.notificationUUID || !decoded.notificationType)
    throw new WebhookVerificationError(PROVIDER, 'notification has no notificationUUID or notificationType');

  const type = String(decoded.notificationType);
  const subtype = decoded.subtype ? String(decoded.subtype) : null;
  const freeTrial =
    transaction?.offerDiscountType === 'FREE_TRIAL' || (transaction?.offerType === 1 && transaction?.price === 0);
  const { signedTransactionInfo: _t, signedRenewalInfo: _r, ...dataRest } = decoded.data ?? {};
  return {
    provider: PROVIDER,
    id: decoded.notificationUUID,
    type,
    kind: notificationKind(type, subtype),
    account_ref: app.bundleId,
    mode: environment === Environment.SANDBOX ? 'test' : 'live',
    occurred_at: iso(decoded.signedDate) ?? (input.now ?? new Date()).toISOString(),
    subscription_external_id: transaction?.originalTransactionId ?? null,
    customer_external_id: null,
    email: null,
    app_user_id: transaction?.appAccountToken ?? null,
    sku: transaction?.productId ?? null,
    trial_start: freeTrial ? iso(transaction?.purchaseDate) : null,
    trial_end: freeTrial ? iso(transaction?.expiresDate) : null,
    current_period_end: iso(transaction?.expiresDate),
    payload: {
      notificationType: type,
      subtype,
      notificationUUID: decoded.notificationUUID,
      version: decoded.version,
      signedDate: decoded.signedDate,
      data: { ...dataRest, transactionInfo: transaction ?? null, renewalInfo: renewal ?? null },
      summary: decoded.summary,
    },
  };
}
