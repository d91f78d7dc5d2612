import crypto from 'node:crypto';
import { METADATA_ENCODING_KEY, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
// A transitive dependency, pinned exactly (1.24.0) by @temporalio/common and @temporalio/client:
// the Payload message is serialised whole, so its original metadata is encrypted too.
// Default import: the package is CommonJS, and Node's ESM loader sees no named exports in it.
import proto from '@temporalio/proto';
import { KEY_ID_RE, deriveKeyring, parseMasterKey, type DerivedKeyring } from '../vault/keyring';
import type { Vault } from '../vault/vault';

/**
 * AES-256-GCM over every Temporal payload (workflow inputs, results, signals, queries, activity
 * arguments and results, heartbeats, memos), after Temporal's TypeScript encryption sample
 * (temporalio/samples-typescript, `encryption`). Histories hold ciphertext; only processes with
 * MASTER_KEY read them.
 *
 * Layout as in the sample (so tools built from it, e.g. its codec server, read ours):
 * metadata `encoding: binary/encrypted` and `encryption-key-id: <MASTER_KEY entry id>`,
 * data `iv(12) || ciphertext || tag(16)` of the serialised original Payload.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';
// Its own HKDF info: never the vault's key, so a payload key and a credential key are unrelated.
export const PAYLOAD_CODEC_INFO = 'billing-service temporal payload codec v1';
const { temporal } = proto;
const encode = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const decode = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Decoding failed. The message names the cause and MASTER_KEY, never a key, payload or ciphertext. */
export class PayloadDecryptError extends Error {
  constructor(message: string) {
    super(`temporal payload codec: ${message}`);
    this.name = 'PayloadDecryptError';
  }
}

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly ring: DerivedKeyring) {}

  // Always the current (first) MASTER_KEY entry; older entries only decrypt.
  async encode(payloads: Payload[]): Promise<Payload[]> {
    const keyId = this.ring.currentKeyId;
    const key = this.ring.keys.get(keyId)!;
    return payloads.map((payload) => {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { [METADATA_ENCODING_KEY]: encode(ENCRYPTED_ENCODING), [METADATA_ENCRYPTION_KEY_ID]: encode(keyId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decodeOne(payload));
  }

  private decodeOne(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    // Not ours: histories written before encryption was switched on still replay and read.
    if (!encoding || decode(encoding) !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
    if (!idBytes) throw new PayloadDecryptError('an encrypted payload carries no encryption key id');
    const keyId = decode(idBytes);
    const key = this.ring.keys.get(keyId);
    if (!key) {
      // The id comes from the server: echo it only when it is a well-formed id (ids are not secret).
      const named = KEY_ID_RE.test(keyId) ? `key id "${keyId}"` : 'a malformed key id';
      throw new PayloadDecryptError(`a payload was encrypted under ${named}, which MASTER_KEY does not hold; put that entry back in MASTER_KEY (after the current one) to read it`);
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptError('an encrypted payload is truncated');
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptError(`authentication failed for a payload under key id "${keyId}" (tampered, or that id names a different key in MASTER_KEY)`);
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}

/** The codec for a Vault (its ring derived for payloads) or a MASTER_KEY value. Same key either way. */
export function payloadCodecFor(source: Vault | string): EncryptionCodec {
  const ring = typeof source === 'string' ? deriveKeyring(parseMasterKey(source), PAYLOAD_CODEC_INFO) : source.deriveKeyring(PAYLOAD_CODEC_INFO);
  return new EncryptionCodec(ring);
}

/** What every Temporal Client and Worker of the service is built with (`dataConverter`). */
export function dataConverterFor(source: Vault | string): DataConverter {
  return { payloadCodecs: [payloadCodecFor(source)] };
}
