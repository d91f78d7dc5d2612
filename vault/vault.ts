import crypto from 'node:crypto';
import { KEY_ID_RE, deriveKeyring, parseMasterKey, type DerivedKeyring } from './keyring';

export { generateMasterKey } from './keyring';

/**
 * AES-256-GCM under MASTER_KEY for provider credentials and webhook signing secrets.
 *
 * Envelope: `v1:<keyId>:<iv b64url>:<tag b64url>:<ciphertext b64url>`. The key id makes
 * rotation possible (old keys keep decrypting until `reencryptAll` has moved every row).
 * The caller's AAD (`<tenant_id>:<row id>:<column>`) binds a ciphertext to its row, so a value
 * copied into another row or tenant fails authentication instead of decrypting.
 */
export interface Vault {
  readonly currentKeyId: string;
  readonly keyIds: readonly string[];
  encrypt(plaintext: string, aad: string): string;
  decrypt(envelope: string, aad: string): string;
  encryptJson(value: unknown, aad: string): string;
  decryptJson<T = unknown>(envelope: string, aad: string): T;
  /** True when the envelope is not under the current key (or is not an envelope at all). */
  needsReencrypt(envelope: string): boolean;
  /**
   * The same MASTER_KEY ring derived for another purpose (e.g. the Temporal payload codec), so
   * whatever holds a Vault can key that purpose without seeing MASTER_KEY. Refuses the vault's own
   * info string: the vault's keys never leave it.
   */
  deriveKeyring(info: string): DerivedKeyring;
}

export type VaultFailure = 'malformed' | 'unknown_key' | 'auth_failed';

/** Decryption failed. The message never carries the envelope, the AAD's secret parts or any key. */
export class VaultDecryptError extends Error {
  constructor(readonly reason: VaultFailure) {
    const why = {
      malformed: 'the stored value is not a vault envelope',
      unknown_key: 'the value was encrypted under a key id that MASTER_KEY no longer holds',
      auth_failed: 'authentication failed (wrong key, tampered value, or a value moved from another row)',
    }[reason];
    super(`vault: cannot decrypt: ${why}`);
    this.name = 'VaultDecryptError';
  }
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Derived rather than used raw, so MASTER_KEY can later key other purposes without key reuse.
const HKDF_INFO = 'billing-service vault v1 aes-256-gcm';
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

interface Parsed {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ct: Buffer;
}

function parseEnvelope(envelope: string): Parsed | null {
  if (typeof envelope !== 'string') return null;
  const parts = envelope.split(':');
  if (parts.length !== 5 || parts[0] !== VERSION || !KEY_ID_RE.test(parts[1])) return null;
  if (!parts.slice(2).every((p) => B64URL_RE.test(p))) return null;
  const [, keyId, iv, tag, ct] = parts;
  const parsed = {
    keyId,
    iv: Buffer.from(iv, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
    ct: Buffer.from(ct, 'base64url'),
  };
  if (parsed.iv.length !== IV_BYTES || parsed.tag.length !== TAG_BYTES) return null;
  // Canonical encoding only: otherwise unused trailing bits give one ciphertext many spellings.
  if (parsed.ct.toString('base64url') !== ct) return null;
  return parsed;
}

function boundAad(keyId: string, aad: string): Buffer {
  if (typeof aad !== 'string' || aad === '')
    throw new TypeError('vault: aad must name the row and field the value belongs to');
  // The header is authenticated too: a key id swapped in the envelope cannot pass.
  return Buffer.from(`${VERSION}:${keyId}:${aad}`, 'utf8');
}

export function createVault(masterKeyEnv: string | undefined): Vault {
  const ring = parseMasterKey(masterKeyEnv);
  const { keys, currentKeyId } = deriveKeyring(ring, HKDF_INFO);

  const encrypt = (plaintext: string, aad: string): string => {
    if (typeof plaintext !== 'string') throw new TypeError('vault: plaintext must be a string');
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', keys.get(currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(boundAad(currentKeyId, aad));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, currentKeyId, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join(
      ':',
    );
  };

  const decrypt = (envelope: string, aad: string): string => {
    const p = parseEnvelope(envelope);
    if (!p) throw new VaultDecryptError('malformed');
    const key = keys.get(p.keyId);
    if (!key) throw new VaultDecryptError('unknown_key');
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, p.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(boundAad(p.keyId, aad));
    decipher.setAuthTag(p.tag);
    try {
      return Buffer.concat([decipher.update(p.ct), decipher.final()]).toString('utf8');
    } catch {
      throw new VaultDecryptError('auth_failed');
    }
  };

  return Object.freeze({
    currentKeyId,
    keyIds: Object.freeze([...keys.keys()]),
    encrypt,
    decrypt,
    encryptJson: (value: unknown, aad: string) => encrypt(JSON.stringify(value), aad),
    decryptJson: <T>(envelope: string, aad: string) => JSON.parse(decrypt(envelope, aad)) as T,
    needsReencrypt: (envelope: string) => parseEnvelope(envelope)?.keyId !== currentKeyId,
    deriveKeyring: (info: string) => {
      if (info === HKDF_INFO)
        throw new Error('vault: deriveKeyring is for other purposes; the vault keys stay inside the vault');
      return deriveKeyring(ring, info);
    },
  });
}
