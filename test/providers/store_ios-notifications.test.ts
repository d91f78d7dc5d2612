import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/store_ios/emulator';
import { ProviderRejectedError, WebhookVerificationError } from '../../providers/errors';
import { createStoreIosAdapter } from '../../providers/store_ios/adapter';
import { appAccountTokenFor } from '../../providers/store_ios/app-account-token';
import { fetchEmulatorRootCa } from '../../providers/store_ios/signed-data';
import type { ProviderAdapter, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

interface Account {
  account: string;
  credentials: Record<'test' | 'live', Record<string, string>>;
}

let emu: RunningEmulator;
let adapter: ProviderAdapter;
let acct: Account;
let ctx: ProviderContext;

// A stand-in for our webhook endpoint: records each raw body the emulator POSTs.
let sink: WebhookReceiver;
let sinkUrl: string;
let received: ReceivedWebhook[] = [];

const control = controlFor(() => emu.url, { strict: true });

/** Have the emulator send a notification, and hand back exactly what our endpoint received. */
async function notify(body: Record<string, unknown>): Promise<{ id: string; raw: Buffer }> {
  const before = received.length;
  const res = await control<{ id: string; status: number }>('POST', '/events', { target: sinkUrl, ...body });
  expect(res.status).toBe(200);
  expect(received.length).toBe(before + 1);
  return { id: res.id, raw: received[received.length - 1].body };
}

const verify = (raw: Buffer) =>
  adapter.verifyWebhook({ headers: { 'content-type': 'application/json' }, rawBody: raw, secret: '' });

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await control<Account>('POST', '/accounts', { account: 'com.example.notify' });
  // The service wires the emulator's root the same way in demo mode.
  adapter = createStoreIosAdapter({ trustedRoots: async () => [await fetchEmulatorRootCa(emu.url)] });
  ctx = {
    baseUrl: emu.url,
    mode: 'test',
    credential: acct.credentials.test,
    accountRef: acct.account,
    timeoutMs: 5000,
  };
  sink = await startWebhookReceiver('store_ios', { body: 'ok' });
  sinkUrl = sink.url;
  received = sink.received;
});

afterAll(async () => {
  await emu?.close();
  await sink?.close();
});

describe('store_ios sandbox purchase → fetchStorePurchase', () => {
  it('a sandbox tester purchase is found through the Server API, verified, and reported as sandbox', async () => {
    const bought = await control<{ transaction_id: string; signed_transaction: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      app_user_id: 'user-42',
    });
    expect(Object.keys(bought).sort()).toEqual(['signed_transaction', 'transaction_id']);
    const purchase = await adapter.fetchStorePurchase!(ctx, bought.transaction_id, 'premium_monthly');
    expect(purchase).toMatchObject({
      provider: 'store_ios',
      purchase_id: bought.transaction_id,
      store_product_id: 'premium_monthly',
      app_user_id: appAccountTokenFor('user-42'),
      is_sandbox: true,
      state: 'active',
      // The transaction's storefront (alpha-3, USA) as the buyer's country (alpha-2).
      country: 'US',
    });
    expect(new Date(purchase.expires_at!).getTime()).toBeGreaterThan(Date.now() + 27 * 86_400_000);
  });

  it('the signed transaction a device receives verifies against the same root', async () => {
    const bought = await control<{ signed_transaction: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
    });
    const { SignedDataVerifier, Environment } = await import('@apple/app-store-server-library');
    const root = await fetchEmulatorRootCa(emu.url);
    const tx = await new SignedDataVerifier(
      [root],
      false,
      Environment.SANDBOX,
      acct.account,
    ).verifyAndDecodeTransaction(bought.signed_transaction);
    expect(tx).toMatchObject({
      productId: 'premium_monthly',
      environment: 'Sandbox',
      type: 'Auto-Renewable Subscription',
    });
  });

  it('a UUID app_user_id is the appAccountToken itself', async () => {
    const uuid = crypto.randomUUID();
    const bought = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      app_user_id: uuid,
    });
    expect((await adapter.fetchStorePurchase!(ctx, bought.transaction_id)).app_user_id).toBe(uuid);
  });

  it('rejects a purchase of another product, and the live key cannot see sandbox transactions', async () => {
    const bought = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
    });
    await expect(adapter.fetchStorePurchase!(ctx, bought.transaction_id, 'premium_annual')).rejects.toThrow(
      /not premium_annual/,
    );
    const live = { ...ctx, mode: 'live' as const, credential: acct.credentials.live };
    const err = await adapter.fetchStorePurchase!(live, bought.transaction_id).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect(err.status).toBe(404);
  });

  it('follows the subscription through refund and billing grace', async () => {
    const a = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', { product_id: 'premium_monthly' });
    await notify({
      type: 'DID_FAIL_TO_RENEW',
      subtype: 'GRACE_PERIOD',
      data: { originalTransactionId: a.transaction_id },
    });
    const grace = await adapter.fetchStorePurchase!(ctx, a.transaction_id);
    expect(grace.state).toBe('grace_period');
    expect(new Date(grace.expires_at!).getTime()).toBeGreaterThan(Date.now() + 15 * 86_400_000);

    const b = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', { product_id: 'premium_monthly' });
    await notify({ type: 'REFUND', data: { originalTransactionId: b.transaction_id } });
    expect((await adapter.fetchStorePurchase!(ctx, b.transaction_id)).state).toBe('revoked');

    const c = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', { product_id: 'premium_monthly' });
    await notify({ type: 'EXPIRED', data: { originalTransactionId: c.transaction_id } });
    expect((await adapter.fetchStorePurchase!(ctx, c.transaction_id)).state).toBe('expired');
  });

  it('a Production purchase is fetched with the live key and is not sandbox', async () => {
    const { raw } = await notify({
      type: 'SUBSCRIBED',
      mode: 'live',
      data: { productId: 'premium_annual', app_user_id: 'user-live' },
    });
    const ev = await verify(raw);
    expect(ev.mode).toBe('live');
    const live = { ...ctx, mode: 'live' as const, credential: acct.credentials.live };
    const purchase = await adapter.fetchStorePurchase!(live, ev.subscription_external_id!);
    expect(purchase).toMatchObject({
      is_sandbox: false,
      state: 'active',
      store_product_id: 'premium_annual',
      app_user_id: appAccountTokenFor('user-live'),
    });
    // …and the test key cannot see it.
    await expect(adapter.fetchStorePurchase!(ctx, ev.subscription_external_id!)).rejects.toBeInstanceOf(
      ProviderRejectedError,
    );
  });

  it('after a renewal, the original transaction id reports the latest period', async () => {
    const a = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', { product_id: 'premium_monthly' });
    const before = await adapter.fetchStorePurchase!(ctx, a.transaction_id);
    await notify({ type: 'DID_RENEW', data: { originalTransactionId: a.transaction_id } });
    const after = await adapter.fetchStorePurchase!(ctx, a.transaction_id);
    expect(after.purchase_id).toBe(a.transaction_id);
    expect(new Date(after.expires_at!).getTime()).toBeGreaterThan(new Date(before.expires_at!).getTime());
  });
});

describe('store_ios Server Notifications V2 verification', () => {
  it('accepts the emulator signed DID_RENEW and normalises it', async () => {
    const bought = await control<{ transaction_id: string }>('POST', '/sandbox-purchase', {
      product_id: 'premium_monthly',
      app_user_id: 'user-7',
    });
    const { id, raw } = await notify({ type: 'DID_RENEW', data: { originalTransactionId: bought.transaction_id } });
    const ev = await verify(raw);
    expect(ev).toMatchObject({
      provider: 'store_ios',
      id,
      type: 'DID_RENEW',
      kind: 'renewed',
      account_ref: 'com.example.notify',
      mode: 'test',
      subscription_external_id: bought.transaction_id,
      app_user_id: appAccountTokenFor('user-7'),
      sku: 'premium_monthly',
    });
    expect(ev.current_period_end).toMatch(/^\d{4}-/);
    expect((ev.payload as any).data.transactionInfo.transactionReason).toBe('RENEWAL');
  });

  it.each([
    ['SUBSCRIBED', undefined, 'subscription_created'],
    ['REFUND', undefined, 'refunded'],
    ['DID_FAIL_TO_RENEW', 'GRACE_PERIOD', 'grace_period'],
    ['DID_FAIL_TO_RENEW', undefined, 'payment_failed'],
    ['EXPIRED', 'VOLUNTARY', 'expired'],
    ['DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED', 'subscription_canceled'],
    ['REVOKE', undefined, 'expired'],
    ['TEST', undefined, 'test'],
  ])('%s %s → %s', async (type, subtype, kind) => {
    const { raw } = await notify({ type, subtype });
    expect((await verify(raw)).kind).toBe(kind);
  });

  it('a Production notification (live key side) verifies with the app Apple ID and is live mode', async () => {
    const { raw } = await notify({ type: 'DID_RENEW', mode: 'live' });
    const ev = await verify(raw);
    expect(ev.mode).toBe('live');
    expect((ev.payload as any).data.appAppleId).toEqual(expect.any(Number));
  });

  it('rejects a chain that does not end in a trusted root', async () => {
    const { raw } = await notify({ type: 'DID_RENEW', signature: 'bad' });
    await expect(verify(raw)).rejects.toBeInstanceOf(WebhookVerificationError);
    // …and the emulator's own chain is refused by an adapter that trusts only Apple's root.
    const good = await notify({ type: 'DID_RENEW' });
    await expect(
      createStoreIosAdapter({ enableOnlineChecks: false }).verifyWebhook({
        headers: {},
        rawBody: good.raw,
        secret: '',
      }),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('rejects a tampered payload', async () => {
    const { raw } = await notify({ type: 'DID_RENEW' });
    const { signedPayload } = JSON.parse(raw.toString()) as { signedPayload: string };
    const [h, p, s] = signedPayload.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.notificationType = 'REFUND';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    await expect(verify(Buffer.from(JSON.stringify({ signedPayload: forged })))).rejects.toThrow(
      WebhookVerificationError,
    );
  });

  it('rejects an unsigned payload claiming the Xcode environment (which the library would not check)', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({
        notificationType: 'DID_RENEW',
        notificationUUID: crypto.randomUUID(),
        data: { bundleId: acct.account, environment: 'Xcode' },
      }),
    ).toString('base64url');
    await expect(verify(Buffer.from(JSON.stringify({ signedPayload: `${header}.${payload}.` })))).rejects.toThrow(
      /Sandbox or Production/,
    );
  });

  it('rejects a body that is not {signedPayload}', async () => {
    await expect(verify(Buffer.from('{"hello":1}'))).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verify(Buffer.from('not json'))).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('a redelivery with the same id carries the same notification', async () => {
    const first = await notify({ type: 'DID_RENEW' });
    const again = await notify({ type: 'DID_RENEW', id: first.id });
    expect(again.id).toBe(first.id);
    expect(again.raw.equals(first.raw)).toBe(true);
    expect((await verify(again.raw)).id).toBe(first.id);
  });
});

describe('store_ios emulator persistence', () => {
  it('keeps the same root CA and accounts across a restart with a state file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-ios-emu-'));
    const file = path.join(dir, 'store_ios.json');
    const one = await startEmulator(createEmulator, { port: 0, stateFile: file });
    const root1 = await (await fetch(`${one.url}/__control/root-ca`)).json();
    const a1 = await (
      await fetch(`${one.url}/__control/accounts`, { method: 'POST', body: '{"account":"com.example.persist"}' })
    ).json();
    await one.close();
    const two = await startEmulator(createEmulator, { port: 0, stateFile: file });
    const root2 = await (await fetch(`${two.url}/__control/root-ca`)).json();
    const a2 = await (
      await fetch(`${two.url}/__control/accounts`, { method: 'POST', body: '{"account":"com.example.persist"}' })
    ).json();
    await two.close();
    expect(root2.der_base64).toBe(root1.der_base64);
    expect(root1.pem).toContain('BEGIN CERTIFICATE');
    expect(a2.credentials.test.key_id).toBe(a1.credentials.test.key_id);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
