import crypto from 'node:crypto';
import { isUuid } from '../../domain/ids';

/**
 * StoreKit's appAccountToken must be a UUID, but our app_user_id is any string. A UUID is
 * passed through (lower-cased); anything else becomes a name-based UUID (RFC 4122 version 5,
 * SHA-1) in this fixed namespace, so the SDK, the service and the emulator all derive the
 * same token from the same app_user_id without storing a mapping.
 */
export const APP_ACCOUNT_TOKEN_NAMESPACE = '6f1c2b0e-4a57-4d8e-9b1f-3c2d7e5a9b10';

export function appAccountTokenFor(appUserId: string): string {
  if (isUuid(appUserId)) return appUserId.toLowerCase();
  const ns = Buffer.from(APP_ACCOUNT_TOKEN_NAMESPACE.replace(/-/g, ''), 'hex');
  const hash = crypto.createHash('sha1').update(ns).update(appUserId, 'utf8').digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50; // version 5
  b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
