import crypto, { type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Knex } from 'knex';
import {
  TOKENS_AND_DIGESTS,
  publishedKeys,
  rotationDue,
  type Retention,
  type SigningKeyFacts,
} from '../domain/signing-keys';
import { VaultDecryptError, type Vault } from '../vault/vault';
import {
  activeKey,
  insertFirstSigner,
  keyFacts,
  sealedSigner,
  unwithdrawnKeys,
  withSignerLock,
  type NewSigningKey,
} from './signing-keys';

/**
 * The deployment's signing service (docs/entitlement-tokens.md, "Keys"): signs compact JWS with
 * the active Ed25519 key and publishes the JWKS. One per database handle (`signingKeys(db,
 * vault)`); entitlement tokens and the proofs' digests share it.
 *
 * Every signature reads which key is active (one indexed row; for an entitlement token, read with
 * the premium check's own statements, `ACTIVE_SIGNER`), so a rotation or a withdraw made by
 * another process (the admin CLI, the worker's schedule) holds from its commit on; only the
 * opened private key is kept in memory, by kid (a kid never changes its material), with its
 * encoded header.
 */
export interface SigningKeys {
  /** A compact JWS of `payload`: header `{alg: "EdDSA", kid, typ}`, signed by the active key. */
  signJws(payload: object, typ: string): Promise<string>;
  /**
   * The same, by the signer `kid` the caller has just read as active (`ACTIVE_SIGNER`); with no
   * kid, or one that no longer signs when its key is first opened here, as `signJws`.
   */
  signJwsAs(kid: string | undefined, payload: object, typ: string): Promise<string>;
  /** The published keys (RFC 7517): the active one and the retired ones still needed to check what they signed. */
  publishedJwks(): Promise<{ keys: JWK[] }>;
  /** Makes the first key when there is none (at process start; idempotent, safe from two processes at once). */
  ensureSigningKey(): Promise<void>;
  /** A new key signs from now on; the old one retires. `olderThanMs`: only if the signer is at least that old. */
  rotate(opts?: { olderThanMs?: number }): Promise<{ kid: string; rotated: boolean; retired: string | null }>;
  /** Unpublishes a key at once and erases its private half; when it was the signer, a new key signs. */
  withdraw(kid: string): Promise<{ kid: string; already_withdrawn: boolean; new_signer: string | null } | null>;
}

// Binds a sealed private key to its kid and column: moved to another row it does not open.
const aadOf = (kid: string) => `deployment:signing_keys:${kid}:private_key_enc`;

async function newKey(vault: Vault): Promise<NewSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('Ed25519', { extractable: true });
  const pub = await exportJWK(publicKey);
  const public_jwk = { kty: pub.kty!, crv: pub.crv!, x: pub.x! };
  // RFC 7638 thumbprint: the kid names the key material itself, so two keys never share one.
  const kid = await calculateJwkThumbprint(public_jwk);
  const priv = await exportJWK(privateKey);
  return { kid, public_jwk, private_key_enc: vault.encryptJson(priv, aadOf(kid)) };
}

const services = new WeakMap<Knex, SigningKeys>();

/** The signing service of this database handle (made once; its key cache lives as long as the handle). */
// Daily digests are served for ever (docs/event-proofs.md), so a retired key stays published for ever.
export function signingKeys(db: Knex, vault: Vault, retention: Retention = TOKENS_AND_DIGESTS): SigningKeys {
  let s = services.get(db);
  if (!s) {
    s = createSigningKeys(db, vault, retention);
    services.set(db, s);
  }
  return s;
}

function createSigningKeys(db: Knex, vault: Vault, retention: Retention): SigningKeys {
  // Opened once per kid: a Node KeyObject signs directly (about half of WebCrypto's CPU per
  // signature), and the header, the same for every token of a kid and type, is encoded once.
  const opened = new Map<string, { key: KeyObject; headers: Map<string, string> }>();
  const privateKey = (kid: string, sealed: string) => {
    let k = opened.get(kid);
    if (!k) {
      const jwk = vault.decryptJson<JWK>(sealed, aadOf(kid));
      k = { key: crypto.createPrivateKey({ key: jwk as crypto.JsonWebKey, format: 'jwk' }), headers: new Map() };
      opened.set(kid, k);
    }
    return k;
  };
  /** RFC 7515 compact serialisation, signed with Ed25519 (RFC 8037: `alg` EdDSA). */
  const compactJws = (kid: string, k: ReturnType<typeof privateKey>, payload: object, typ: string) => {
    let header = k.headers.get(typ);
    if (!header) {
      header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid, typ })).toString('base64url');
      k.headers.set(typ, header);
    }
    const input = `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${input}.${crypto.sign(null, Buffer.from(input), k.key).toString('base64url')}`;
  };

  /** A new key signs from now on; `olderThanMs`: only if the signer is that old; `unopenable`: only if it signs. */
  const rotateSigner = async (opts: { olderThanMs?: number; unopenable?: string }) => {
    const next = await newKey(vault);
    return withSignerLock(db, async (signer: SigningKeyFacts | undefined, ops) => {
      if (signer && opts.olderThanMs !== undefined && !rotationDue(signer, new Date(), opts.olderThanMs))
        return { kid: signer.kid, rotated: false, retired: null };
      if (signer && opts.unopenable !== undefined && signer.kid !== opts.unopenable)
        return { kid: signer.kid, rotated: false, retired: null };
      if (signer) await ops.replace(next);
      else await ops.add(next);
      return { kid: next.kid, rotated: true, retired: signer?.kid ?? null };
    });
  };

  const ensureSigningKey = async () => {
    if (await activeKey(db)) return;
    await insertFirstSigner(db, await newKey(vault));
  };

  const signJws = async (payload: object, typ: string) => {
    let signer = await activeKey(db);
    if (!signer) {
      await ensureSigningKey();
      signer = await activeKey(db);
      if (!signer) throw new Error('signing keys: no active key after ensuring one');
    }
    let key: ReturnType<typeof privateKey>;
    try {
      key = privateKey(signer.kid, signer.private_key_enc);
    } catch (err) {
      if (!(err instanceof VaultDecryptError)) throw err;
      // Sealed under a MASTER_KEY this process does not hold (the master key changed without
      // `token-key:rotate`): nothing here can sign with it, so a key of ours takes over; the old
      // one retires, still published for what it signed (docs/entitlement-tokens.md).
      await rotateSigner({ unopenable: signer.kid });
      signer = await activeKey(db);
      if (!signer) throw new Error('signing keys: no active key after replacing an unopenable one', { cause: err });
      key = privateKey(signer.kid, signer.private_key_enc);
    }
    return compactJws(signer.kid, key, payload, typ);
  };

  return {
    signJws,

    async signJwsAs(kid, payload, typ) {
      if (kid) {
        const known = opened.get(kid);
        if (known) return compactJws(kid, known, payload, typ);
        const sealed = await sealedSigner(db, kid);
        if (sealed) {
          try {
            return compactJws(kid, privateKey(kid, sealed), payload, typ);
          } catch (err) {
            if (!(err instanceof VaultDecryptError)) throw err; // signJws replaces a key this process cannot open
          }
        }
      }
      return signJws(payload, typ);
    },

    async publishedJwks() {
      const keys = publishedKeys(await unwithdrawnKeys(db), new Date(), retention);
      return { keys: keys.map((k) => ({ ...k.public_jwk, kid: k.kid, alg: 'EdDSA', use: 'sig' })) };
    },

    ensureSigningKey,

    rotate: (opts = {}) => rotateSigner(opts),

    async withdraw(kid) {
      const before = await keyFacts(db, kid);
      if (!before) return null;
      const next = await newKey(vault);
      return withSignerLock(db, async (signer, ops) => {
        await ops.withdraw(kid);
        opened.delete(kid);
        const wasSigner = signer?.kid === kid;
        if (wasSigner) await ops.add(next);
        return { kid, already_withdrawn: before.state === 'withdrawn', new_signer: wasSigner ? next.kid : null };
      });
    },
  };
}
