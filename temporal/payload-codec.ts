import crypto from 'node:crypto';
import {
  METADATA_ENCODING_KEY,
  type DataConverter,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
} from '@temporalio/common';
// A transitive dependency, pinned exactly (1.24.0) by @temporalio/common and @temporalio/client:
// the Payload message is serialised whole, so its original metadata is encrypted too.
// Default import: the package is CommonJS, and Node's ESM loader sees no named exports in it.
import proto from '@temporalio/proto';
import { payloadRefusals } from '../runtime/metrics';
import { KEY_ID_RE, deriveKeyring, parseMasterKey, type DerivedKeyring } from '../vault/keyring';
import type { Vault } from '../vault/vault';

/**
 * AES-256-GCM over every Temporal payload (workflow inputs, results, signals, queries, activity
 * arguments and results, heartbeats, memos), after Temporal's TypeScript encryption sample
 * (temporalio/samples-typescript, `encryption`). Histories hold ciphertext; only processes with
 * MASTER_KEY read them.
 *
 * Layout as in the sample: metadata `encoding: binary/encrypted` and `encryption-key-id: <MASTER_KEY
 * entry id>`, data `iv(12) || ciphertext || tag(16)` of the serialised original Payload. On top of
 * the sample, each ciphertext is **bound to its namespace and workflow**: metadata
 * `encryption-binding: namespace+workflow-id`, and the namespace and workflow id the SDK names
 * in its serialization context (1.24: the workflow a payload is sent to or comes from, or the
 * workflow that scheduled an activity) are the GCM additional data. A ciphertext copied into
 * another workflow's history fails authentication there.
 *
 * What the codec refuses (docs/temporal.md, "Payloads are encrypted"): payloads that are not
 * ours (plaintext: a client without the codec, e.g. the Temporal CLI, wrote them) unless
 * TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1; ciphertext of the first, unbound layout (no
 * `encryption-binding`) unless TEMPORAL_ALLOW_UNBOUND_PAYLOADS=1; a key id MASTER_KEY does not
 * hold. Each refusal throws, which fails the workflow (or activity) task it happened in, so nothing
 * is applied; Temporal retries the task, and each attempt counts
 * `billing_temporal_payload_refusals_total{reason}` and logs an error naming the fix.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';
export const METADATA_ENCRYPTION_BINDING = 'encryption-binding';
/** The binding this codec writes: the GCM additional data is the payload's namespace and workflow id. */
export const BINDING_NAMESPACE_WORKFLOW = 'namespace+workflow-id';
// Its own HKDF info: never the vault's key, so a payload key and a credential key are unrelated.
export const PAYLOAD_CODEC_INFO = 'billing-service temporal payload codec v1';
const AAD_LABEL = 'billing-service temporal payload binding v1';
const { temporal } = proto;
const encode = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const decode = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Why a payload was refused: the `reason` label of billing_temporal_payload_refusals_total. */
export type RefusalReason = 'plaintext' | 'unbound' | 'unknown_key' | 'authentication' | 'malformed';

/** Decoding failed. The message names the cause and the fix, never a key, payload or ciphertext. */
export class PayloadDecryptError extends Error {
  constructor(
    message: string,
    readonly reason: RefusalReason = 'malformed',
  ) {
    super(`temporal payload codec: ${message}`);
    this.name = 'PayloadDecryptError';
  }
}

/** Which payloads besides bound ciphertext are read (`Config.temporalPayloads`). Both off: a new install. */
export interface PayloadPolicy {
  /**
   * TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1: payloads without our encoding pass through (histories from before encryption).
   */
  allowPlaintext: boolean;
  /**
   * TEMPORAL_ALLOW_UNBOUND_PAYLOADS=1: ciphertext of the first layout, bound to no workflow, decrypts (histories from
   * before binding).
   */
  allowUnbound: boolean;
}
export const STRICT_PAYLOADS: PayloadPolicy = { allowPlaintext: false, allowUnbound: false };

export interface CodecOptions {
  policy?: PayloadPolicy;
  /** Where refusals are logged (the worker's logger); none: only the metric and the thrown error. */
  log?: { error(fields: object, message: string): void };
}

/** Where a payload belongs, as the GCM additional data: namespace and workflow id (empty when the SDK names none). */
export interface PayloadOwner {
  namespace: string;
  workflowId: string;
}
function ownerOf(context: SerializationContext | undefined): PayloadOwner {
  return { namespace: context?.namespace ?? '', workflowId: context?.workflowId ?? '' };
}
const additionalData = (o: PayloadOwner) => Buffer.from(JSON.stringify([AAD_LABEL, o.namespace, o.workflowId]), 'utf8');

export class EncryptionCodec implements PayloadCodec {
  private readonly policy: PayloadPolicy;
  private readonly log: CodecOptions['log'];

  constructor(
    private readonly ring: DerivedKeyring,
    opts: CodecOptions = {},
  ) {
    this.policy = opts.policy ?? STRICT_PAYLOADS;
    this.log = opts.log;
  }

  // Always the current (first) MASTER_KEY entry; older entries only decrypt.
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const keyId = this.ring.currentKeyId;
    const key = this.ring.keys.get(keyId)!;
    const aad = additionalData(ownerOf(context));
    return payloads.map((payload) => {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad);
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: encode(ENCRYPTED_ENCODING),
          [METADATA_ENCRYPTION_KEY_ID]: encode(keyId),
          [METADATA_ENCRYPTION_BINDING]: encode(BINDING_NAMESPACE_WORKFLOW),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const owner = ownerOf(context);
    return payloads.map((payload) => {
      try {
        return this.decodeOne(payload, owner);
      } catch (e) {
        if (e instanceof PayloadDecryptError) this.refused(e, payload, context);
        throw e;
      }
    });
  }

  private refused(e: PayloadDecryptError, payload: Payload, context: SerializationContext | undefined): void {
    payloadRefusals.inc({ reason: e.reason });
    const idBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
    const keyId = idBytes ? decode(idBytes) : undefined;
    this.log?.error(
      {
        reason: e.reason,
        key_id: keyId && KEY_ID_RE.test(keyId) ? keyId : undefined,
        namespace: context?.namespace,
        workflow_id: context?.workflowId,
        owner_type: context?.type,
        activity_id: context?.type === 'activity' ? context.activityId : undefined,
      },
      e.message,
    );
  }

  private decodeOne(payload: Payload, owner: PayloadOwner): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || decode(encoding) !== ENCRYPTED_ENCODING) {
      // Histories written before encryption was switched on, when the operator says there are some.
      if (this.policy.allowPlaintext) return payload;
      throw new PayloadDecryptError(
        'an unencrypted payload was refused: ours are always encrypted, so a client without the codec (the Temporal CLI, a bare SDK client) wrote it. ' +
          'Nothing of it was applied. If it is from a history recorded before payload encryption, set TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1 (docs/temporal.md, "Upgrading")',
        'plaintext',
      );
    }
    const idBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
    if (!idBytes) throw new PayloadDecryptError('an encrypted payload carries no encryption key id', 'malformed');
    const keyId = decode(idBytes);
    const key = this.ring.keys.get(keyId);
    if (!key) {
      // The id comes from the server: echo it only when it is a well-formed id (ids are not secret).
      const named = KEY_ID_RE.test(keyId) ? `key id "${keyId}"` : 'a malformed key id';
      throw new PayloadDecryptError(
        `a payload was encrypted under ${named}, which MASTER_KEY does not hold; put that entry back in MASTER_KEY (after the current one) and restart the workers to read it. ` +
          'Its workflow task fails and is retried until then',
        'unknown_key',
      );
    }
    const binding = payload.metadata?.[METADATA_ENCRYPTION_BINDING];
    const bound = !!binding;
    if (bound && decode(binding) !== BINDING_NAMESPACE_WORKFLOW)
      throw new PayloadDecryptError('an encrypted payload names a binding this codec does not know', 'malformed');
    if (!bound && !this.policy.allowUnbound) {
      throw new PayloadDecryptError(
        'a payload encrypted without binding to its workflow (the layout of releases before the binding) was refused. ' +
          'If it is from a history recorded before this release, set TEMPORAL_ALLOW_UNBOUND_PAYLOADS=1 (docs/temporal.md, "Upgrading")',
        'unbound',
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new PayloadDecryptError('an encrypted payload is truncated', 'malformed');
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    if (bound) decipher.setAAD(additionalData(owner));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptError(
        `authentication failed for a payload under key id "${keyId}": tampered, copied from another workflow or namespace, or that id names a different key in MASTER_KEY. Nothing of it was applied`,
        'authentication',
      );
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}

/** The codec for a Vault (its ring derived for payloads) or a MASTER_KEY value. Same key either way. */
export function payloadCodecFor(source: Vault | string, opts?: CodecOptions): EncryptionCodec {
  const ring =
    typeof source === 'string'
      ? deriveKeyring(parseMasterKey(source), PAYLOAD_CODEC_INFO)
      : source.deriveKeyring(PAYLOAD_CODEC_INFO);
  return new EncryptionCodec(ring, opts);
}

/** What every Temporal Client and Worker of the service is built with (`dataConverter`). */
export function dataConverterFor(source: Vault | string, opts?: CodecOptions): DataConverter {
  return { payloadCodecs: [payloadCodecFor(source, opts)] };
}
