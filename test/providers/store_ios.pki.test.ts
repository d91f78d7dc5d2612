import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { certificateSerial } from '../../emulators/store_ios/pki';

/** DER INTEGER bytes for a serial given as hex (jsrsasign writes the hex as it is). */
const derMinimal = (hex: string) => {
  const bytes = Buffer.from(hex, 'hex');
  const negative = (bytes[0] & 0x80) !== 0;
  const padded = bytes.length > 1 && bytes[0] === 0x00 && (bytes[1] & 0x80) === 0;
  return !negative && !padded;
};

describe('the App Store emulator signing chain', () => {
  it('gives certificate serials OpenSSL accepts, whatever the random bytes', () => {
    // The draws that once broke a chain ("illegal padding"): a leading zero byte, and a high bit.
    for (const first of [0x00, 0x05, 0x7f, 0x80, 0xff]) {
      const random = Buffer.concat([Buffer.from([first, 0x12]), crypto.randomBytes(6)]);
      expect([first, derMinimal(certificateSerial(random))]).toEqual([first, true]);
    }
    for (let i = 0; i < 2000; i++) expect(derMinimal(certificateSerial(crypto.randomBytes(8)))).toBe(true);
  });
});
