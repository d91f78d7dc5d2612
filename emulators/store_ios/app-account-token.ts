import crypto from 'node:crypto';
import { isUuid } from '../../domain/ids';

/**
 * What the app hands StoreKit as `appAccountToken` when it buys for `appUserId`, derived here on
 * the device's side of the emulator, independently of the service's own derivation
 * (providers/store_ios/app-account-token.ts): the App Store only stores the token the purchase
 * carried, and the service must recognise it. Were the emulator to borrow the service's function,
 * a bug there would agree with itself; written apart, a registration that the service refuses as
 * "another app user" exposes it (test/sdk/store-purchases.test.ts, test/providers/app-account-token.test.ts).
 *
 * The documented convention: a UUID is used as it is (lower-cased); any other id becomes the
 * RFC 4122 name-based UUID (version 5, SHA-1) of its UTF-8 bytes in the namespace below.
 */
const NAMESPACE = '6f1c2b0e-4a57-4d8e-9b1f-3c2d7e5a9b10';

export function deviceAppAccountToken(appUserId: string): string {
  if (isUuid(appUserId)) return appUserId.toLowerCase();
  const name = new TextEncoder().encode(appUserId);
  const namespaceBytes = Uint8Array.from(
    NAMESPACE.replaceAll('-', '')
      .match(/../g)!
      .map((h) => parseInt(h, 16)),
  );
  const digest = new Uint8Array(
    crypto
      .createHash('sha1')
      .update(new Uint8Array([...namespaceBytes, ...name]))
      .digest(),
  );
  const bytes = Array.from(digest.slice(0, 16));
  bytes[6] = 0x50 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join('-');
}
