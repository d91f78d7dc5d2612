import { describe, expect, it } from 'vitest';
import { appAccountTokenFor } from '../../providers/store_ios/app-account-token';
import { deviceAppAccountToken } from '../../emulators/store_ios/app-account-token';

/**
 * StoreKit's appAccountToken for an app user, on both sides: the service (which compares it with
 * the registering user) and the emulated device (which put it on the purchase). Known answers come
 * from a third implementation, Python's `uuid.uuid5(UUID('6f1c2b0e-4a57-4d8e-9b1f-3c2d7e5a9b10'), name)`,
 * so a bug in the service's derivation fails here even though the emulator no longer shares it.
 */
const KNOWN: [string, string][] = [
  ['user-42', '62db8f03-59c2-5d11-b717-2a06d1443bb5'],
  ['i_user', 'a91846ad-6cae-52cd-8bf7-eaa148298c47'],
  ['ü-ñ user', '254934eb-241e-5132-9c9e-eebba09e4797'],
  ['', 'dabfecc3-53d3-5d5c-8e9c-24f1e6fef4ad'],
];

describe('appAccountToken derivation', () => {
  it.each(KNOWN)('the service and the device derive the RFC 4122 v5 answer for %j', (appUserId, token) => {
    expect(appAccountTokenFor(appUserId)).toBe(token);
    expect(deviceAppAccountToken(appUserId)).toBe(token);
  });

  it('a UUID app user id is its own token, lower-cased, on both sides', () => {
    const id = 'A91846AD-6CAE-52CD-8BF7-EAA148298C47';
    expect(appAccountTokenFor(id)).toBe(id.toLowerCase());
    expect(deviceAppAccountToken(id)).toBe(id.toLowerCase());
  });
});
