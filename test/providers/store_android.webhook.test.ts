import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/store_android/emulator';
import { WebhookVerificationError } from '../../providers/errors';
import { createStoreAndroidAdapter } from '../../providers/store_android/adapter';
import { getOrPostControlFor } from '../helpers/emulator-control';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

type Creds = { account: string; webhook_secret: string; push_service_account_email: string };
type Received = ReceivedWebhook;

let emu: RunningEmulator;
let acct: Creds;
let target: string;
let server: WebhookReceiver;
let inbox: Received[] = [];
let adapter: ReturnType<typeof createStoreAndroidAdapter>;

const control = getOrPostControlFor(() => emu.url);

/** Has the emulator push one RTDN to our receiver and returns what arrived. */
async function push(body: Record<string, unknown>): Promise<Received & { id: string; status: number }> {
  const before = inbox.length;
  const sent = await control('/events', { target, account: acct.account, ...body });
  expect(inbox.length).toBe(before + 1);
  return { ...inbox[inbox.length - 1], ...sent };
}

const input = (
  r: Received,
  over: Partial<{ secret: string; now: Date; headers: Received['headers']; rawBody: Buffer }> = {},
) => ({
  headers: r.headers,
  rawBody: r.body,
  secret: acct.webhook_secret,
  ...over,
});

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await control('/accounts', { account: `com.example.w${crypto.randomBytes(4).toString('hex')}` });
  adapter = createStoreAndroidAdapter({ jwksUrl: `${emu.url}/oauth2/v3/certs` });
  server = await startWebhookReceiver('store_android', { status: 204 });
  target = server.url;
  inbox = server.received;
});
afterAll(async () => {
  await server.close();
  await emu.close();
});

describe('store_android: RTDN Pub/Sub push verification', () => {
  it('accepts the emulator’s push and parses the DeveloperNotification', async () => {
    const { purchase_token } = await control('/sandbox-purchase', {
      product_id: 'monthly',
      app_user_id: 'u1',
      account: acct.account,
    });
    const r = await push({ type: 'SUBSCRIPTION_PURCHASED', data: { purchaseToken: purchase_token } });
    expect(r.status).toBe(204);
    expect(r.headers.authorization).toMatch(/^Bearer ey/);
    const wire = JSON.parse(r.body.toString());
    expect(wire.subscription).toMatch(/^projects\/.+\/subscriptions\//);
    expect(wire.message).toMatchObject({ messageId: r.id });

    const ev = await adapter.verifyWebhook(input(r));
    expect(ev).toMatchObject({
      provider: 'store_android',
      id: r.id,
      type: 'SUBSCRIPTION_PURCHASED',
      kind: 'subscription_created',
      account_ref: acct.account,
      mode: 'live',
      subscription_external_id: purchase_token,
      sku: 'monthly',
    });
    expect(Math.abs(Date.parse(ev.occurred_at) - Date.now())).toBeLessThan(60_000);
  });

  it('maps each notificationType to its normalised kind', async () => {
    const cases: [string, string, string][] = [
      ['subscription.renewed', 'SUBSCRIPTION_RENEWED', 'renewed'],
      ['SUBSCRIPTION_RECOVERED', 'SUBSCRIPTION_RECOVERED', 'renewed'],
      ['SUBSCRIPTION_CANCELED', 'SUBSCRIPTION_CANCELED', 'subscription_canceled'],
      ['SUBSCRIPTION_ON_HOLD', 'SUBSCRIPTION_ON_HOLD', 'payment_failed'],
      ['SUBSCRIPTION_IN_GRACE_PERIOD', 'SUBSCRIPTION_IN_GRACE_PERIOD', 'grace_period'],
      ['SUBSCRIPTION_RESTARTED', 'SUBSCRIPTION_RESTARTED', 'subscription_updated'],
      ['12', 'SUBSCRIPTION_REVOKED', 'refunded'],
      ['SUBSCRIPTION_EXPIRED', 'SUBSCRIPTION_EXPIRED', 'expired'],
      ['VOIDED_PURCHASE', 'VOIDED_PURCHASE', 'refunded'],
    ];
    for (const [sent, type, kind] of cases) {
      const ev = await adapter.verifyWebhook(input(await push({ type: sent })));
      expect({ sent, type: ev.type, kind: ev.kind }).toEqual({ sent, type, kind });
    }
    const test = await adapter.verifyWebhook(input(await push({ type: 'TEST_NOTIFICATION' })));
    expect(test).toMatchObject({ type: 'TEST_NOTIFICATION', kind: 'test', mode: 'test' });
  });

  it('a redelivery reuses the message id and body, with a freshly signed token', async () => {
    const first = await push({ type: 'SUBSCRIPTION_RENEWED', id: 'msg-redelivery-1' });
    const again = await push({ type: 'SUBSCRIPTION_RENEWED', id: 'msg-redelivery-1' });
    expect(again.id).toBe('msg-redelivery-1');
    expect(again.body.equals(first.body)).toBe(true);
    expect((await adapter.verifyWebhook(input(again))).id).toBe('msg-redelivery-1');
  });

  it('rejects a token signed with another key', async () => {
    const r = await push({ type: 'SUBSCRIPTION_RENEWED', signature: 'bad' });
    const err = await adapter.verifyWebhook(input(r)).catch((e) => e);
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect(err.reason).toMatch(/signature/);
  });

  it('rejects a token whose claims were altered after signing', async () => {
    const r = await push({ type: 'SUBSCRIPTION_RENEWED' });
    const [h, p, s] = String(r.headers.authorization).slice('Bearer '.length).split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, aud: 'https://attacker.example' })).toString('base64url');
    await expect(
      adapter.verifyWebhook(input(r, { headers: { ...r.headers, authorization: `Bearer ${h}.${forged}.${s}` } })),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('rejects the wrong audience (another tenant’s push endpoint)', async () => {
    const r = await push({ type: 'SUBSCRIPTION_RENEWED' });
    const err = await adapter
      .verifyWebhook(input(r, { secret: 'https://rtdn.billing.invalid/other-tenant' }))
      .catch((e) => e);
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect(err.reason).toMatch(/aud/);
  });

  it('rejects an expired token', async () => {
    const r = await push({ type: 'SUBSCRIPTION_RENEWED' });
    const err = await adapter.verifyWebhook(input(r, { now: new Date(Date.now() + 2 * 3600_000) })).catch((e) => e);
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect(err.reason).toMatch(/expired/);
  });

  it('rejects a push without an Authorization header, or with no audience configured', async () => {
    const r = await push({ type: 'SUBSCRIPTION_RENEWED' });
    const { authorization: _drop, ...rest } = r.headers;
    await expect(adapter.verifyWebhook(input(r, { headers: rest }))).rejects.toThrow(/missing Authorization/);
    await expect(adapter.verifyWebhook(input(r, { secret: '' }))).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('the token does not cover the body: a body that is not an RTDN is still refused as unprocessable', async () => {
    // Pub/Sub's OIDC token authenticates the sender, not the bytes; a forged notification can only
    // point at a purchase token, and every state change is re-read from Play before it counts.
    const r = await push({ type: 'SUBSCRIPTION_RENEWED' });
    const garbage = Buffer.from(JSON.stringify({ message: { data: 'not base64 json!', messageId: '1' } }));
    await expect(adapter.verifyWebhook(input(r, { rawBody: garbage }))).rejects.toThrow(/unprocessable push/);
    await expect(adapter.verifyWebhook(input(r, { rawBody: Buffer.from('{}') }))).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
  });

  it('checks the push service account email when configured', async () => {
    const r = await push({ type: 'SUBSCRIPTION_RENEWED' });
    const strict = createStoreAndroidAdapter({
      jwksUrl: `${emu.url}/oauth2/v3/certs`,
      pushServiceAccountEmail: acct.push_service_account_email,
    });
    expect((await strict.verifyWebhook(input(r))).kind).toBe('renewed');
    const wrong = createStoreAndroidAdapter({
      jwksUrl: `${emu.url}/oauth2/v3/certs`,
      pushServiceAccountEmail: 'someone@else.iam.gserviceaccount.com',
    });
    await expect(wrong.verifyWebhook(input(r))).rejects.toThrow(/push service account/);
  });

  it('publishes its OIDC key set at the path Google uses', async () => {
    const res = await fetch(`${emu.url}/oauth2/v3/certs`);
    const jwks = await res.json();
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });
});
