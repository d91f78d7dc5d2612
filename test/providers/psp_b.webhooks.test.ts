import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_b/emulator';
import { ProviderRejectedError, WebhookVerificationError } from '../../providers/errors';
import { createPspBAdapter } from '../../providers/psp_b/adapter';
import { paddleAccountRef } from '../../providers/psp_b/webhook';
import type { NormalisedEvent, ProductSpec, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

// Signed notifications, the checkout control and the OAuth-style connect flow of the psp_b
// emulator, checked through the adapter's verifyWebhook and exchangeOAuthCode.

interface Account {
  account: string;
  credentials: { test: { api_key: string }; live: { api_key: string } };
  webhook_secret: string;
}
let emu: RunningEmulator;
let acct: Account;
let target: WebhookReceiver;
let targetUrl: string;
let received: ReceivedWebhook[] = [];
const adapter = createPspBAdapter();

const control = controlFor(() => emu.url, { strict: true });

const verify = (r: ReceivedWebhook, over: { secret?: string; now?: Date; rawBody?: Buffer } = {}) =>
  adapter.verifyWebhook({
    headers: r.headers,
    rawBody: over.rawBody ?? r.body,
    secret: over.secret ?? acct.webhook_secret,
    now: over.now,
  });

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

async function send(
  type: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; status: number; event: NormalisedEvent }> {
  const before = received.length;
  const res = await control<{ id: string; status: number }>('POST', '/events', { type, target: targetUrl, ...extra });
  expect(received.length).toBe(before + 1);
  return { ...res, event: await verify(received[before]) };
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await control<Account>('POST', '/accounts', {});
  target = await startWebhookReceiver('psp_b');
  targetUrl = target.url;
  received = target.received;
});
afterAll(async () => {
  await emu?.close();
  await target?.close();
});
beforeEach(() => {
  target.clear();
});

describe('psp_b webhooks: signature verification', () => {
  it("accepts the emulator's Paddle-Signature and normalises the event", async () => {
    const { id, status, event } = await send('subscription.created');
    expect(status).toBe(200);
    expect(received[0].headers['paddle-signature']).toMatch(/^ts=\d+;h1=[0-9a-f]{64}$/);
    const body = JSON.parse(received[0].body.toString());
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining(['event_id', 'event_type', 'occurred_at', 'notification_id', 'data']),
    );
    expect(body.event_id).toMatch(/^evt_/);
    expect(body.notification_id).toMatch(/^ntf_/);
    expect(event).toMatchObject({
      provider: 'psp_b',
      id,
      type: 'subscription.created',
      kind: 'subscription_created',
      account_ref: acct.account,
      mode: 'test',
    });
    expect(paddleAccountRef(received[0].body)).toBe(acct.account);
  });

  it('rejects a tampered body', async () => {
    await send('transaction.completed');
    const tampered = Buffer.from(received[0].body.toString().replace('"completed"', '"canceled"'));
    const err = await rejection(verify(received[0], { rawBody: tampered }));
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect((err as WebhookVerificationError).reason).toBe('signature does not match');
  });

  it('rejects the wrong secret, and a delivery signed with a wrong secret', async () => {
    await send('transaction.completed');
    expect(await rejection(verify(received[0], { secret: 'pdl_ntfset_someone_else' }))).toBeInstanceOf(
      WebhookVerificationError,
    );
    await control('POST', '/events', { type: 'transaction.completed', target: targetUrl, signature: 'bad' });
    expect(await rejection(verify(received[1]))).toBeInstanceOf(WebhookVerificationError);
  });

  it("rejects a timestamp older than Paddle's 5 s tolerance, and a missing or malformed header", async () => {
    await send('transaction.completed');
    const later = new Date(Date.now() + 10_000);
    const stale = await rejection(verify(received[0], { now: later }));
    expect(stale).toBeInstanceOf(WebhookVerificationError);
    expect((stale as WebhookVerificationError).reason).toContain('older than 5 s');
    const relaxed = createPspBAdapter({ webhookToleranceSec: 300 });
    await relaxed.verifyWebhook({
      headers: received[0].headers,
      rawBody: received[0].body,
      secret: acct.webhook_secret,
      now: later,
    });
    const noHeader = await rejection(
      adapter.verifyWebhook({ headers: {}, rawBody: received[0].body, secret: acct.webhook_secret }),
    );
    expect((noHeader as WebhookVerificationError).reason).toContain('missing');
    const garbled = await rejection(
      adapter.verifyWebhook({
        headers: { 'Paddle-Signature': 'v1=abc' },
        rawBody: received[0].body,
        secret: acct.webhook_secret,
      }),
    );
    expect((garbled as WebhookVerificationError).reason).toContain('malformed');
  });

  it('rejects a timestamp more than the tolerance in the future, as it does one in the past', async () => {
    await send('transaction.completed');
    const ts = Number(/^ts=(\d+);/.exec(String(received[0].headers['paddle-signature']))![1]);
    const at = (sec: number) => new Date(sec * 1000);
    // The emulator's own signature, checked by a clock 10 s behind it: ts is 10 s ahead.
    const early = await rejection(verify(received[0], { now: at(ts - 10) }));
    expect(early).toBeInstanceOf(WebhookVerificationError);
    expect((early as WebhookVerificationError).reason).toContain('more than 5 s in the future');
    await verify(received[0], { now: at(ts - 4) });
    await verify(received[0], { now: at(ts + 4) });

    // A correctly signed Paddle-Signature whose ts is 30 days ahead.
    const future = ts + 30 * 86_400;
    const h1 = crypto
      .createHmac('sha256', acct.webhook_secret)
      .update(`${future}:`)
      .update(received[0].body)
      .digest('hex');
    const headers = { ...received[0].headers, 'paddle-signature': `ts=${future};h1=${h1}` };
    const far = await rejection(
      adapter.verifyWebhook({ headers, rawBody: received[0].body, secret: acct.webhook_secret, now: at(ts) }),
    );
    expect((far as WebhookVerificationError).reason).toContain('in the future');
    // The configured tolerance is the bound both ways.
    const relaxed = createPspBAdapter({ webhookToleranceSec: 300 });
    await relaxed.verifyWebhook({
      headers: received[0].headers,
      rawBody: received[0].body,
      secret: acct.webhook_secret,
      now: at(ts - 299),
    });
    expect(
      await rejection(
        relaxed.verifyWebhook({
          headers: received[0].headers,
          rawBody: received[0].body,
          secret: acct.webhook_secret,
          now: at(ts - 301),
        }),
      ),
    ).toBeInstanceOf(WebhookVerificationError);
    expect(
      await rejection(
        relaxed.verifyWebhook({ headers, rawBody: received[0].body, secret: acct.webhook_secret, now: at(ts) }),
      ),
    ).toBeInstanceOf(WebhookVerificationError);
  });

  it('accepts any h1 during secret rotation', async () => {
    await send('transaction.completed');
    const header = String(received[0].headers['paddle-signature']);
    const rotated = {
      ...received[0].headers,
      'paddle-signature': `${header.split(';')[0]};h1=${'0'.repeat(64)};${header.split(';')[1]}`,
    };
    await adapter.verifyWebhook({ headers: rotated, rawBody: received[0].body, secret: acct.webhook_secret });
  });

  it('redelivers an event with the same id and body when the id is given again', async () => {
    const first = await send('subscription.updated');
    const again = await send('subscription.updated', { id: first.id });
    expect(again.id).toBe(first.id);
    expect(again.event.id).toBe(first.event.id);
    expect(JSON.parse(received[1].body.toString()).data).toEqual(JSON.parse(received[0].body.toString()).data);
    const chosen = `evt_${crypto.randomBytes(8).toString('hex')}`;
    expect((await send('subscription.updated', { id: chosen })).event.id).toBe(chosen);
  });

  it.each([
    ['subscription.created', {}, 'subscription_created'],
    ['subscription.updated', {}, 'subscription_updated'],
    ['subscription.activated', {}, 'subscription_updated'],
    ['subscription.canceled', {}, 'subscription_canceled'],
    ['subscription.past_due', {}, 'grace_period'],
    ['transaction.paid', {}, 'payment_succeeded'],
    ['transaction.completed', {}, 'payment_succeeded'],
    ['transaction.completed', { data: { origin: 'subscription_recurring' } }, 'renewed'],
    ['transaction.payment_failed', {}, 'payment_failed'],
    ['transaction.past_due', {}, 'payment_failed'],
    ['adjustment.created', {}, 'refunded'],
    ['adjustment.updated', {}, 'refunded'],
    ['adjustment.created', { data: { status: 'pending_approval' } }, 'other'],
    ['adjustment.created', { data: { action: 'credit' } }, 'other'],
    ['customer.created', {}, 'other'],
  ] as const)('maps %s %o to %s', async (type, extra, kind) => {
    expect((await send(type, extra)).event.kind).toBe(kind);
  });

  it('marks live events live and routes them to the named account', async () => {
    const other = await control<Account>('POST', '/accounts', { account: 'seller_other' });
    await control('POST', '/events', {
      type: 'subscription.created',
      target: targetUrl,
      account: other.account,
      mode: 'live',
    });
    const event = await adapter.verifyWebhook({
      headers: received[0].headers,
      rawBody: received[0].body,
      secret: other.webhook_secret,
    });
    expect(event).toMatchObject({ account_ref: 'seller_other', mode: 'live' });
    expect(await rejection(verify(received[0]))).toBeInstanceOf(WebhookVerificationError);
  });
});

describe('psp_b checkout control', () => {
  it('creates customer, trialing subscription and transaction, and sends the signed events in order', async () => {
    const ctx: ProviderContext = {
      baseUrl: emu.url,
      mode: 'test',
      credential: { api_key: acct.credentials.test.api_key },
      accountRef: acct.account,
    };
    const spec: ProductSpec = {
      product_id: crypto.randomUUID(),
      tenant_id: 'ten_1',
      sku: 'pro_monthly',
      name: 'Pro',
      type: 'subscription',
      tier: 'monthly',
      version: 1,
      trial_days: 7,
      prices: [{ country: 'US', currency: 'USD', amount_minor: 999 }],
    };
    const { external_id } = await adapter.upsertProduct(ctx, spec, 'k');
    const { price_ids } = await adapter.upsertPrices(ctx, external_id, spec, 'k');

    const out = await control<{
      subscription_id: string;
      customer_id: string;
      events: { id: string; type: string; status: number }[];
    }>('POST', '/checkout', {
      sku: 'pro_monthly',
      email: 'buyer@example.com',
      target: targetUrl,
      trial_days: 7,
      app_user_id: 'user_42',
    });
    expect(out.subscription_id).toMatch(/^sub_/);
    expect(out.customer_id).toMatch(/^ctm_/);
    expect(out.events.map((e) => [e.type, e.status])).toEqual([
      ['transaction.paid', 200],
      ['subscription.created', 200],
      ['transaction.completed', 200],
    ]);
    expect(received).toHaveLength(3);
    const events = await Promise.all(received.map((r) => verify(r)));
    expect(events.map((e) => e.id)).toEqual(out.events.map((e) => e.id));
    expect(events.map((e) => e.kind)).toEqual(['payment_succeeded', 'subscription_created', 'payment_succeeded']);
    for (const e of events) {
      expect(e).toMatchObject({
        account_ref: acct.account,
        mode: 'test',
        subscription_external_id: out.subscription_id,
        customer_external_id: out.customer_id,
        email: 'buyer@example.com',
        app_user_id: 'user_42',
        sku: 'pro_monthly',
      });
    }
    const created = events[1];
    expect(created.trial_start).toBeTruthy();
    expect(Date.parse(created.trial_end!) - Date.parse(created.trial_start!)).toBe(7 * 86400_000);
    expect(created.current_period_end).toBe(created.trial_end);
    const sub = (created.payload as { data: { status: string; items: { price: { id: string } }[] } }).data;
    expect(sub.status).toBe('trialing');
    expect(sub.items[0].price.id).toBe(price_ids[0]);

    // The same objects are visible through the API with the sandbox key.
    const res = await fetch(`${emu.url}/subscriptions/${out.subscription_id}`, {
      headers: { Authorization: `Bearer ${acct.credentials.test.api_key}` },
    });
    expect((await res.json()).data).toMatchObject({
      id: out.subscription_id,
      status: 'trialing',
      customer_id: out.customer_id,
    });
    const live = await fetch(`${emu.url}/subscriptions/${out.subscription_id}`, {
      headers: { Authorization: `Bearer ${acct.credentials.live.api_key}` },
    });
    expect(live.status).toBe(404);

    // Cancelling afterwards targets that subscription and updates the emulator's copy.
    const canceled = await send('subscription.canceled');
    expect(canceled.event).toMatchObject({
      kind: 'subscription_canceled',
      subscription_external_id: out.subscription_id,
    });
    const st = await control<Record<string, { id: string; status: string }[]>>('GET', '/state');
    expect(st.subscriptions.find((s) => s.id === out.subscription_id)?.status).toBe('canceled');
  });

  it('checks out without a trial as an active subscription, reusing the customer by email', async () => {
    const out = await control<{ subscription_id: string; customer_id: string; events: { type: string }[] }>(
      'POST',
      '/checkout',
      {
        sku: 'unsynced_sku',
        email: 'again@example.com',
        target: targetUrl,
      },
    );
    const again = await control<{ customer_id: string }>('POST', '/checkout', {
      sku: 'unsynced_sku',
      email: 'again@example.com',
      target: targetUrl,
    });
    expect(again.customer_id).toBe(out.customer_id);
    const created = await verify(received[1]);
    expect((created.payload as { data: { status: string } }).data.status).toBe('active');
    expect(created.trial_end).toBeNull();
    expect(created.sku).toBe('unsynced_sku');
  });
});

describe('psp_b OAuth-style connect', () => {
  const client = { client_id: 'ca_billing', client_secret: 'cs_billing_secret' };
  const redirect = 'http://127.0.0.1:4001/oauth/callback/psp_b';

  async function authorize(form: Record<string, string>): Promise<URL> {
    const page = await fetch(
      `${emu.url}/oauth/authorize?response_type=code&client_id=${client.client_id}&redirect_uri=${encodeURIComponent(redirect)}&state=st_1`,
    );
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/oauth/authorize">');
    expect(html).toContain('Connect');
    expect(html).toContain(`value="${acct.account}"`);
    const res = await fetch(`${emu.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: redirect,
        state: 'st_1',
        decision: 'allow',
        ...form,
      }),
    });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  it('connects an existing seller: authorize page → code → token exchange', async () => {
    const back = await authorize({ account: acct.account, mode: 'test' });
    expect(back.origin + back.pathname).toBe(redirect);
    expect(back.searchParams.get('state')).toBe('st_1');
    const code = back.searchParams.get('code')!;
    const result = await adapter.exchangeOAuthCode!(emu.url, client, code);
    expect(result).toEqual({
      account_ref: acct.account,
      credential: { api_key: acct.credentials.test.api_key },
      mode: 'test',
    });
    // The key works against the API, and the code is single-use.
    await adapter.checkReachable({
      baseUrl: emu.url,
      mode: result.mode,
      credential: result.credential,
      accountRef: result.account_ref,
    });
    const reused = await rejection(adapter.exchangeOAuthCode!(emu.url, client, code));
    expect(reused).toBeInstanceOf(ProviderRejectedError);
    expect((reused as ProviderRejectedError).opts.code).toBe('invalid_grant');
  });

  it('creates a new seller in live mode when no seller id is given', async () => {
    const back = await authorize({ account: '', mode: 'live' });
    const result = await adapter.exchangeOAuthCode!(emu.url, client, back.searchParams.get('code')!);
    expect(result.mode).toBe('live');
    expect(result.account_ref).not.toBe(acct.account);
    expect(result.credential.api_key).toMatch(/^pdl_live_apikey_/);
    const accounts = await control<{ accounts: Account[] }>('GET', '/accounts');
    expect(accounts.accounts.find((a) => a.account === result.account_ref)?.credentials.live.api_key).toBe(
      result.credential.api_key,
    );
  });

  it('reports a denied connect and refuses bad client credentials or codes', async () => {
    const denied = await authorize({ decision: 'deny' });
    expect(denied.searchParams.get('error')).toBe('access_denied');
    const back = await authorize({ account: acct.account });
    const noSecret = await rejection(
      adapter.exchangeOAuthCode!(
        emu.url,
        { client_id: client.client_id, client_secret: '' },
        back.searchParams.get('code')!,
      ),
    );
    expect((noSecret as ProviderRejectedError).opts.code).toBe('invalid_client');
    const wrongClient = await rejection(
      adapter.exchangeOAuthCode!(emu.url, { ...client, client_id: 'ca_other' }, back.searchParams.get('code')!),
    );
    expect((wrongClient as ProviderRejectedError).opts.code).toBe('invalid_grant');
    const unknown = await rejection(adapter.exchangeOAuthCode!(emu.url, client, 'ac_unknown'));
    expect((unknown as ProviderRejectedError).opts.code).toBe('invalid_grant');
  });
});
