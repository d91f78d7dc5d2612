import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { createVault, generateMasterKey } from '../../vault/vault';
import { ENCRYPTED_ENCODING, METADATA_ENCRYPTION_KEY_ID, PayloadDecryptError, payloadCodecFor } from '../../temporal/payload-codec';

const encode = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const decode = (b: Uint8Array) => Buffer.from(b).toString('utf8');
const MARKER = `marker-${crypto.randomBytes(6).toString('hex')}`;
const plain = (): Payload => defaultPayloadConverter.toPayload({ note: MARKER, n: 42 });
const value = (p: Payload) => defaultPayloadConverter.fromPayload(p);
const key = (id: string) => `${id}:${crypto.randomBytes(32).toString('base64')}`;

async function decodeError(codec: ReturnType<typeof payloadCodecFor>, p: Payload): Promise<Error> {
  const e = await codec.decode([p]).then(
    () => null,
    (err: Error) => err,
  );
  expect(e, 'decode should have failed').toBeInstanceOf(PayloadDecryptError);
  return e!;
}

describe('Temporal payload codec (AES-256-GCM under MASTER_KEY)', () => {
  it('round-trips, hiding the value and its original metadata', async () => {
    const codec = payloadCodecFor(key('k1'));
    const [enc] = await codec.encode([plain()]);
    expect(decode(enc.metadata![METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);
    expect(decode(enc.metadata![METADATA_ENCRYPTION_KEY_ID])).toBe('k1');
    expect(Object.keys(enc.metadata!).sort()).toEqual([METADATA_ENCRYPTION_KEY_ID, METADATA_ENCODING_KEY].sort());
    expect(Buffer.from(enc.data!).toString('latin1')).not.toContain(MARKER);
    expect(Buffer.from(enc.data!).toString('latin1')).not.toContain('json/plain');
    const [dec] = await codec.decode([enc]);
    expect(value(dec)).toEqual({ note: MARKER, n: 42 });
    // A fresh IV per payload: the same value never gives the same ciphertext.
    const [again] = await codec.encode([plain()]);
    expect(Buffer.from(again.data!).equals(Buffer.from(enc.data!))).toBe(false);
  });

  it('is the same key from a Vault and from the MASTER_KEY string, and not the vault key', async () => {
    const mk = generateMasterKey();
    const vault = createVault(mk);
    const [enc] = await payloadCodecFor(vault).encode([plain()]);
    expect(value((await payloadCodecFor(mk).decode([enc]))[0])).toEqual({ note: MARKER, n: 42 });
    expect(() => vault.deriveKeyring('billing-service vault v1 aes-256-gcm')).toThrow(/stay inside the vault/);
    const codecKey = vault.deriveKeyring('billing-service temporal payload codec v1').keys.get(vault.currentKeyId)!;
    expect(codecKey.equals(vault.deriveKeyring('something else').keys.get(vault.currentKeyId)!)).toBe(false);
  });

  it('rotation: encodes under the first entry, decodes under any entry of the ring', async () => {
    const older = key('old');
    const [underOld] = await payloadCodecFor(older).encode([plain()]);
    const rotated = payloadCodecFor(`${key('new')},${older}`);
    expect(value((await rotated.decode([underOld]))[0])).toEqual({ note: MARKER, n: 42 });
    const [underNew] = await rotated.encode([plain()]);
    expect(decode(underNew.metadata![METADATA_ENCRYPTION_KEY_ID])).toBe('new');
  });

  it('an unknown key id fails with a clear error naming MASTER_KEY and no key material', async () => {
    const gone = key('gone');
    const [enc] = await payloadCodecFor(gone).encode([plain()]);
    const current = key('k2');
    const e = await decodeError(payloadCodecFor(current), enc);
    expect(e.message).toMatch(/key id "gone".*MASTER_KEY/);
    for (const k of [gone, current]) expect(e.message).not.toContain(k.split(':')[1]);
    expect(e.message).not.toContain(MARKER);
    // A malformed id from the server is not echoed.
    const odd = { ...enc, metadata: { ...enc.metadata, [METADATA_ENCRYPTION_KEY_ID]: encode('x:y\nz') } };
    expect((await decodeError(payloadCodecFor(current), odd)).message).toMatch(/a malformed key id/);
  });

  it('passes payloads that are not encrypted through unchanged (histories from before encryption)', async () => {
    const codec = payloadCodecFor(key('k1'));
    const p = plain();
    const [out] = await codec.decode([p]);
    expect(out).toBe(p);
    const empty: Payload = {};
    expect((await codec.decode([empty]))[0]).toBe(empty);
  });

  it('tampered ciphertext, a swapped key id or a truncated payload fail authentication', async () => {
    const codec = payloadCodecFor(`${key('a')},${key('b')}`);
    const [enc] = await codec.encode([plain()]);
    const flipped = Buffer.from(enc.data!);
    flipped[20] ^= 1;
    expect((await decodeError(codec, { ...enc, data: flipped })).message).toMatch(/authentication failed/);
    const swapped = { ...enc, metadata: { ...enc.metadata, [METADATA_ENCRYPTION_KEY_ID]: encode('b') } };
    expect((await decodeError(codec, swapped)).message).toMatch(/authentication failed/);
    expect((await decodeError(codec, { ...enc, data: Buffer.from(enc.data!).subarray(0, 20) })).message).toMatch(/truncated/);
    const noId = { ...enc, metadata: { [METADATA_ENCODING_KEY]: enc.metadata![METADATA_ENCODING_KEY] } };
    expect((await decodeError(codec, noId)).message).toMatch(/no encryption key id/);
  });
});
