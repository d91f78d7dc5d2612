import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  defaultPayloadConverter,
  METADATA_ENCODING_KEY,
  type Payload,
  type SerializationContext,
} from '@temporalio/common';
import proto from '@temporalio/proto';
import { payloadRefusals } from '../../runtime/metrics';
import { decodeHistory, readableEvents } from '../../temporal/history-payloads';
import { createVault, generateMasterKey } from '../../vault/vault';
import {
  BINDING_NAMESPACE_WORKFLOW,
  ENCRYPTED_ENCODING,
  METADATA_ENCRYPTION_BINDING,
  METADATA_ENCRYPTION_KEY_ID,
  PAYLOAD_CODEC_INFO,
  PayloadDecryptError,
  payloadCodecFor,
} from '../../temporal/payload-codec';

const encode = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const decode = (b: Uint8Array) => Buffer.from(b).toString('utf8');
const MARKER = `marker-${crypto.randomBytes(6).toString('hex')}`;
const plain = (): Payload => defaultPayloadConverter.toPayload({ note: MARKER, n: 42 });
const value = (p: Payload) => defaultPayloadConverter.fromPayload(p);
const key = (id: string) => `${id}:${crypto.randomBytes(32).toString('base64')}`;
/** The context the SDK hands the codec: the workflow a payload goes to or comes from (or that scheduled an activity). */
const wf = (workflowId: string, namespace = 'default'): SerializationContext => ({
  type: 'workflow',
  namespace,
  workflowId,
});
const WORKFLOW_ID = 'customer-t1-psp_a-cus_1';
const ctx = wf(WORKFLOW_ID);
const refusals = async (reason: string) =>
  (await payloadRefusals.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

/** What releases before the binding wrote: the same layout, no additional data, no binding entry. */
function unboundCiphertext(masterKey: string, p: Payload): Payload {
  const [id, material] = masterKey.split(':');
  const k = Buffer.from(
    crypto.hkdfSync('sha256', Buffer.from(material, 'base64'), Buffer.alloc(0), PAYLOAD_CODEC_INFO, 32),
  );
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', k, iv, { authTagLength: 16 });
  const bytes = proto.temporal.api.common.v1.Payload.encode(p).finish();
  return {
    metadata: { [METADATA_ENCODING_KEY]: encode(ENCRYPTED_ENCODING), [METADATA_ENCRYPTION_KEY_ID]: encode(id) },
    data: Buffer.concat([iv, cipher.update(bytes), cipher.final(), cipher.getAuthTag()]),
  };
}

/** `context` null: decoded with no context at all. */
async function decodeError(
  codec: ReturnType<typeof payloadCodecFor>,
  p: Payload,
  context: SerializationContext | null = ctx,
): Promise<PayloadDecryptError> {
  const e = await codec.decode([p], context ?? undefined).then(
    () => null,
    (err: Error) => err,
  );
  expect(e, 'decode should have failed').toBeInstanceOf(PayloadDecryptError);
  return e as PayloadDecryptError;
}

describe('Temporal payload codec (AES-256-GCM under MASTER_KEY, bound to namespace and workflow)', () => {
  it('round-trips, hiding the value and its original metadata', async () => {
    const codec = payloadCodecFor(key('k1'));
    const [enc] = await codec.encode([plain()], ctx);
    expect(decode(enc.metadata![METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);
    expect(decode(enc.metadata![METADATA_ENCRYPTION_KEY_ID])).toBe('k1');
    expect(decode(enc.metadata![METADATA_ENCRYPTION_BINDING])).toBe(BINDING_NAMESPACE_WORKFLOW);
    expect(Object.keys(enc.metadata!).sort()).toEqual(
      [METADATA_ENCRYPTION_KEY_ID, METADATA_ENCODING_KEY, METADATA_ENCRYPTION_BINDING].sort(),
    );
    expect(Buffer.from(enc.data!).toString('latin1')).not.toContain(MARKER);
    expect(Buffer.from(enc.data!).toString('latin1')).not.toContain('json/plain');
    const [dec] = await codec.decode([enc], ctx);
    expect(value(dec)).toEqual({ note: MARKER, n: 42 });
    // A fresh IV per payload: the same value never gives the same ciphertext.
    const [again] = await codec.encode([plain()], ctx);
    expect(Buffer.from(again.data!).equals(Buffer.from(enc.data!))).toBe(false);
  });

  it('is the same key from a Vault and from the MASTER_KEY string, and not the vault key', async () => {
    const mk = generateMasterKey();
    const vault = createVault(mk);
    const [enc] = await payloadCodecFor(vault).encode([plain()], ctx);
    expect(value((await payloadCodecFor(mk).decode([enc], ctx))[0])).toEqual({ note: MARKER, n: 42 });
    expect(() => vault.deriveKeyring('billing-service vault v1 aes-256-gcm')).toThrow(/stay inside the vault/);
    const codecKey = vault.deriveKeyring('billing-service temporal payload codec v1').keys.get(vault.currentKeyId)!;
    expect(codecKey.equals(vault.deriveKeyring('something else').keys.get(vault.currentKeyId)!)).toBe(false);
  });

  it('rotation: encodes under the first entry, decodes under any entry of the ring', async () => {
    const older = key('old');
    const [underOld] = await payloadCodecFor(older).encode([plain()], ctx);
    const rotated = payloadCodecFor(`${key('new')},${older}`);
    expect(value((await rotated.decode([underOld], ctx))[0])).toEqual({ note: MARKER, n: 42 });
    const [underNew] = await rotated.encode([plain()], ctx);
    expect(decode(underNew.metadata![METADATA_ENCRYPTION_KEY_ID])).toBe('new');
  });

  it('an unknown key id fails loudly: an error naming the id and what to do (no key material), a metric and an error log', async () => {
    const gone = key('gone');
    const [enc] = await payloadCodecFor(gone).encode([plain()], ctx);
    const current = key('k2');
    const logged: { fields: Record<string, unknown>; message: string }[] = [];
    const log = {
      error: (fields: object, message: string) =>
        void logged.push({ fields: fields as Record<string, unknown>, message }),
    };
    const before = await refusals('unknown_key');
    const e = await decodeError(payloadCodecFor(current, { log }), enc);
    expect(e.message).toMatch(/key id "gone".*MASTER_KEY.*restart the workers/);
    expect(e.reason).toBe('unknown_key');
    for (const k of [gone, current]) expect(e.message).not.toContain(k.split(':')[1]);
    expect(e.message).not.toContain(MARKER);
    expect(await refusals('unknown_key')).toBe(before + 1);
    expect(logged).toEqual([
      {
        fields: expect.objectContaining({
          reason: 'unknown_key',
          key_id: 'gone',
          namespace: 'default',
          workflow_id: WORKFLOW_ID,
        }),
        message: e.message,
      },
    ]);
    expect(JSON.stringify(logged)).not.toContain(MARKER);
    // A malformed id from the server is echoed nowhere.
    const odd = { ...enc, metadata: { ...enc.metadata, [METADATA_ENCRYPTION_KEY_ID]: encode('x:y\nz') } };
    expect((await decodeError(payloadCodecFor(current, { log }), odd)).message).toMatch(/a malformed key id/);
    expect(logged[1].fields.key_id).toBeUndefined();
  });

  it('refuses payloads that are not encrypted, unless TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS allows them (histories from before encryption)', async () => {
    const strict = payloadCodecFor(key('k1'));
    const before = await refusals('plaintext');
    const e = await decodeError(strict, plain());
    expect(e.message).toMatch(/unencrypted payload was refused.*TEMPORAL_ALLOW_PLAINTEXT_PAYLOADS=1/);
    expect(e.message).not.toContain(MARKER);
    await decodeError(strict, {});
    expect(await refusals('plaintext')).toBe(before + 2);
    const upgraded = payloadCodecFor(key('k1'), { policy: { allowPlaintext: true, allowUnbound: false } });
    const p = plain();
    expect((await upgraded.decode([p], ctx))[0]).toBe(p);
    const empty: Payload = {};
    expect((await upgraded.decode([empty]))[0]).toBe(empty);
  });

  it('binds ciphertext to its namespace and workflow: copied into another workflow or namespace, it fails authentication', async () => {
    const codec = payloadCodecFor(key('k1'));
    const [enc] = await codec.encode([plain()], ctx);
    // An activity's payloads name the workflow that scheduled it: the same binding.
    const activity: SerializationContext = {
      type: 'activity',
      namespace: 'default',
      workflowId: WORKFLOW_ID,
      activityId: '1',
      isLocal: true,
    };
    expect(value((await codec.decode([enc], activity))[0])).toEqual({ note: MARKER, n: 42 });
    const before = await refusals('authentication');
    for (const elsewhere of [wf('customer-t1-psp_a-cus_2'), wf(WORKFLOW_ID, 'other-namespace'), null]) {
      const e = await decodeError(codec, enc, elsewhere);
      expect(e.message).toMatch(/authentication failed.*copied from another workflow/);
      expect(e.reason).toBe('authentication');
    }
    expect(await refusals('authentication')).toBe(before + 3);
    // Dropping the binding entry (to pass it off as the older, unbound layout) fails too, even where that layout is allowed.
    const { [METADATA_ENCRYPTION_BINDING]: _binding, ...rest } = enc.metadata!;
    const stripped = { ...enc, metadata: rest };
    expect((await decodeError(codec, stripped)).message).toMatch(/without binding/);
    const lenient = payloadCodecFor(key('k1'), { policy: { allowPlaintext: true, allowUnbound: true } });
    expect((await decodeError(lenient, stripped)).reason).toBe('authentication');
    expect(
      (
        await decodeError(codec, {
          ...enc,
          metadata: { ...enc.metadata, [METADATA_ENCRYPTION_BINDING]: encode('none') },
        })
      ).message,
    ).toMatch(/binding this codec does not know/);
  });

  it('ciphertext of releases before the binding decrypts only with TEMPORAL_ALLOW_UNBOUND_PAYLOADS (then in any workflow)', async () => {
    const mk = key('k1');
    const old = unboundCiphertext(mk, plain());
    const before = await refusals('unbound');
    expect((await decodeError(payloadCodecFor(mk), old)).message).toMatch(
      /without binding to its workflow.*TEMPORAL_ALLOW_UNBOUND_PAYLOADS=1/,
    );
    expect(await refusals('unbound')).toBe(before + 1);
    const upgraded = payloadCodecFor(mk, { policy: { allowPlaintext: false, allowUnbound: true } });
    expect(value((await upgraded.decode([old], ctx))[0])).toEqual({ note: MARKER, n: 42 });
    expect(value((await upgraded.decode([old], wf('anything')))[0])).toEqual({ note: MARKER, n: 42 });
    // The two switches are separate: plaintext stays refused.
    expect((await decodeError(upgraded, plain())).reason).toBe('plaintext');
  });

  it('tampered ciphertext, a swapped key id or a truncated payload fail authentication', async () => {
    const codec = payloadCodecFor(`${key('a')},${key('b')}`);
    const [enc] = await codec.encode([plain()], ctx);
    const flipped = Buffer.from(enc.data!);
    flipped[20] ^= 1;
    expect((await decodeError(codec, { ...enc, data: flipped })).message).toMatch(/authentication failed/);
    const swapped = { ...enc, metadata: { ...enc.metadata, [METADATA_ENCRYPTION_KEY_ID]: encode('b') } };
    expect((await decodeError(codec, swapped)).message).toMatch(/authentication failed/);
    expect((await decodeError(codec, { ...enc, data: Buffer.from(enc.data!).subarray(0, 20) })).message).toMatch(
      /truncated/,
    );
    const noId = { ...enc, metadata: { [METADATA_ENCODING_KEY]: enc.metadata![METADATA_ENCODING_KEY] } };
    expect((await decodeError(codec, noId)).message).toMatch(/no encryption key id/);
  });
});

describe('decodeHistory: each payload under the workflow it is bound to', () => {
  it('reads the workflow’s own payloads, a child’s input and a signal to another workflow under theirs, and plaintext as it is', async () => {
    const codec = payloadCodecFor(key('k1'));
    const own = { namespace: 'default', workflowId: 'probe-providers-t1-p1' };
    const enc = async (v: unknown, workflowId: string) =>
      (await codec.encode([defaultPayloadConverter.toPayload(v)], wf(workflowId)))[0];
    const marker = defaultPayloadConverter.toPayload({ patch: 'core writes its markers in clear' });
    const events = [
      {
        eventId: 1,
        workflowExecutionStartedEventAttributes: { input: { payloads: [await enc('input', own.workflowId)] } },
      },
      {
        eventId: 2,
        startChildWorkflowExecutionInitiatedEventAttributes: {
          workflowId: 'voided-purchases-t1-c1',
          input: { payloads: [await enc('child input', 'voided-purchases-t1-c1')] },
        },
      },
      {
        eventId: 3,
        signalExternalWorkflowExecutionInitiatedEventAttributes: {
          workflowExecution: { workflowId: 'other' },
          input: { payloads: [await enc('signal out', 'other')] },
        },
      },
      { eventId: 4, markerRecordedEventAttributes: { details: { patch: { payloads: [marker] } } } },
      {
        eventId: 5,
        workflowExecutionCompletedEventAttributes: { result: { payloads: [await enc('result', own.workflowId)] } },
      },
    ];
    // As fetchHistory returns it (protobufjs messages).
    const history = () => proto.temporal.api.history.v1.History.fromObject({ events });
    const decoded = await decodeHistory(history(), codec, own);
    const values = (await readableEvents(decoded)).map((e) => e.payloads.map((p) => p.value));
    expect(values).toEqual([
      ['input'],
      ['child input'],
      ['signal out'],
      [{ patch: 'core writes its markers in clear' }],
      ['result'],
    ]);
    // Read as another workflow's history, the same payloads fail: they are bound.
    await expect(decodeHistory(history(), codec, { namespace: 'default', workflowId: 'elsewhere' })).rejects.toThrow(
      /authentication failed/,
    );
  });
});
