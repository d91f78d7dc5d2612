import crypto from 'node:crypto';
import { ConfigError } from '../domain/config-error';

/** One master key: its id (named in every ciphertext it makes) and its 32 bytes. */
export interface MasterKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The first key encrypts; every key decrypts (older ones stay until rows are re-encrypted). */
export interface Keyring {
  readonly current: MasterKey;
  readonly byId: ReadonlyMap<string, MasterKey>;
}

const VAR = 'MASTER_KEY';
// No ':' (the envelope separator) and no ',' (the entry separator).
export const KEY_ID_RE = /^[A-Za-z0-9_-]{1,40}$/;
const HEX_RE = /^[0-9a-fA-F]{64}$/;
const B64_RE = /^(?:[A-Za-z0-9+/]{43}=?|[A-Za-z0-9_-]{43})$/;

function fail(message: string): never {
  // Messages say which entry and what is wrong, never any part of the value: the value is the secret.
  throw new ConfigError(
    VAR,
    `${VAR} is invalid: ${message}. Expected "keyId:<base64 of 32 bytes>[,olderKeyId:<base64>...]"`,
  );
}

function decodeKey(material: string, where: string): Buffer {
  let key: Buffer;
  if (HEX_RE.test(material)) key = Buffer.from(material, 'hex');
  else if (B64_RE.test(material)) key = Buffer.from(material.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  else fail(`${where} is not a 32-byte key encoded as base64 (44 characters) or hex (64 characters)`);
  if (key.length !== 32) fail(`${where} does not decode to 32 bytes`);
  // A constant key (all zeros, a placeholder) is a configuration mistake, not a key.
  if (key.every((b) => b === key[0])) fail(`${where} is a constant byte pattern, not a random key`);
  return key;
}

/**
 * Parse MASTER_KEY: comma-separated `keyId:base64(32 bytes)` entries, the first being current,
 * or a single bare base64/hex key (key id `k1`). Strict: any malformed entry, duplicate id or
 * duplicate key fails with a ConfigError naming MASTER_KEY.
 */
export function parseMasterKey(value: string | undefined): Keyring {
  if (value === undefined || value.trim() === '') fail('it is empty or not set');
  const entries = value.split(',').map((e) => e.trim());
  const keys: MasterKey[] = [];
  entries.forEach((entry, i) => {
    const where = `entry ${i + 1}`;
    if (entry === '') fail(`${where} is empty`);
    const colon = entry.indexOf(':');
    if (colon === -1) {
      if (entries.length > 1) fail(`${where} has no key id; with several entries each must be "keyId:<base64>"`);
      keys.push({ id: 'k1', key: decodeKey(entry, where) });
      return;
    }
    const id = entry.slice(0, colon);
    if (!KEY_ID_RE.test(id)) fail(`${where} has an invalid key id (1-40 of A-Z a-z 0-9 _ -)`);
    keys.push({ id, key: decodeKey(entry.slice(colon + 1), where) });
  });
  const byId = new Map<string, MasterKey>();
  keys.forEach((k, i) => {
    if (byId.has(k.id)) fail(`entry ${i + 1} repeats a key id`);
    for (const [, other] of byId) {
      if (crypto.timingSafeEqual(other.key, k.key))
        fail(`entry ${i + 1} repeats the key of an earlier entry (rotation needs a new key)`);
    }
    byId.set(k.id, k);
  });
  return { current: keys[0], byId };
}

/**
 * One 32-byte key per MASTER_KEY entry, derived with HKDF-SHA256 under `info` (one info string
 * per purpose), so no two purposes ever share a key even though they share MASTER_KEY.
 */
export interface DerivedKeyring {
  readonly currentKeyId: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

export function deriveKeyring(ring: Keyring, info: string): DerivedKeyring {
  if (typeof info !== 'string' || info === '') throw new TypeError('deriveKeyring: info must name the purpose');
  const keys = new Map<string, Buffer>();
  for (const [id, k] of ring.byId)
    keys.set(id, Buffer.from(crypto.hkdfSync('sha256', k.key, Buffer.alloc(0), info, 32)));
  return { currentKeyId: ring.current.id, keys };
}

/** A fresh MASTER_KEY entry, `k<unix ms>:<base64>`; prepend it to MASTER_KEY to rotate. */
export function generateMasterKey(now: number = Date.now()): string {
  return `k${now}:${crypto.randomBytes(32).toString('base64')}`;
}
