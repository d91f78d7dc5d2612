import type { ProviderId } from '../../domain/providers';
import { paddleAccountRef } from '../../providers/psp_b/webhook';

const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Play RTDN: the package name inside the Pub/Sub message's base64 data. */
function playPackage(body: { message?: { data?: unknown } }): string | null {
  const data = body?.message?.data;
  if (typeof data !== 'string') return null;
  return nonEmpty(JSON.parse(Buffer.from(data, 'base64').toString('utf8'))?.packageName);
}

/** App Store Server Notifications V2: the bundle id inside the signed payload's (unverified) body. */
function appStoreBundle(body: { signedPayload?: unknown }): string | null {
  const parts = typeof body?.signedPayload === 'string' ? body.signedPayload.split('.') : [];
  if (parts.length !== 3) return null;
  const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  return nonEmpty((payload?.data ?? payload?.summary ?? payload?.appData)?.bundleId);
}

/**
 * The connected account an inbound event names, read before its signature can be checked
 * (the account says whose signing secret to check it with). Nothing else is trusted until then.
 */
export function peekAccount(provider: ProviderId, raw: Buffer): string | null {
  try {
    if (provider === 'psp_b') return paddleAccountRef(raw);
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    if (provider === 'store_android') return playPackage(body);
    if (provider === 'store_ios') return appStoreBundle(body);
    return nonEmpty(provider === 'psp_a' ? body.account : body.account_id);
  } catch {
    return null;
  }
}

/** Providers whose webhooks the receiver takes: all five (the stores' notifications are re-read at the store). */
export const RECEIVING: readonly ProviderId[] = ['psp_a', 'psp_b', 'psp_c', 'store_android', 'store_ios'];

/**
 * Stores verify without a shared secret (App Store: signed JWS against trusted roots); Play's "secret" is the OIDC
 * audience.
 */
export const needsWebhookSecret = (provider: ProviderId) => provider !== 'store_ios';
