import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_c/emulator';
import { WebhookVerificationError } from '../../providers/errors';
import { createPspCAdapter } from '../../providers/psp_c/adapter';
import { kindOf } from '../../providers/psp_c/webhook';
import type { ProductSpec, ProviderContext } from '../../providers/types';
import { controlFor } from '../helpers/emulator-control';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';
import { until } from '../helpers/until';

// Webhooks as the emulator really sends them: signed deliveries to a local receiver,
// verified by the adapter; and the checkout control's events, in order.

let emu: RunningEmulator;
let receiver: WebhookReceiver;
let target: string;
let received: ReceivedWebhook[] = [];
let account: { account: string; credentials: { test: Record<string, string> }; webhook_secret: string };
const adapter = createPspCAdapter();

const control = controlFor(() => emu.url);
const verify = (r: ReceivedWebhook, secret = account.webhook_secret) =>
  adapter.verifyWebhook({ headers: r.headers, rawBody: r.body, secret });

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  account = await control('POST', '/accounts', {});
  receiver = await startWebhookReceiver('psp_c');
  target = receiver.url;
  received = receiver.received;
});
afterAll(async () => {
  await emu.close();
  await receiver.close();
});
beforeEach(() => {
  receiver.clear();
});

describe('psp_c webhook verification', () => {
  it('accepts the emulator’s real signature and normalises the event', async () => {
    const sent = await control('POST', '/events', {
      type: 'payment.captured',
      target,
      data: { email: 'a@example.com', sku: 'pro_m', app_user_id: 'u-1' },
    });
    expect(sent.status).toBe(200);
    expect(received).toHaveLength(1);
    const [r] = received;
    // The header is sent, as Razorpay does, but the id is the signed body's hash.
    expect(r.headers['x-razorpay-event-id']).toBeTruthy();
    expect(sent.id).toBe(`rzp_evt_${crypto.createHash('sha256').update(r.body).digest('hex').slice(0, 32)}`);
    const expected = crypto.createHmac('sha256', account.webhook_secret).update(r.body).digest('hex');
    expect(r.headers['x-razorpay-signature']).toBe(expected);

    const ev = await verify(r);
    expect(ev).toMatchObject({
      provider: 'psp_c',
      id: sent.id,
      type: 'payment.captured',
      kind: 'payment_succeeded',
      account_ref: account.account,
      mode: 'test',
      email: 'a@example.com',
      // The payment's notes are the buyer's checkout's: they name the app user, never the SKU (issue 42).
      sku: null,
      app_user_id: 'u-1',
    });
    const body = JSON.parse(r.body.toString());
    expect(body).toMatchObject({
      entity: 'event',
      account_id: account.account,
      event: 'payment.captured',
      contains: ['payment'],
    });
    expect(body.payload.payment.entity.id).toMatch(/^pay_/);
  });

  it('rejects a tampered body, a wrong secret, a bad signature and a missing one', async () => {
    await control('POST', '/events', { type: 'subscription.activated', target });
    const [r] = received;
    const tampered = Buffer.from(r.body.toString().replace('"active"', '"cancelled"'));
    expect(tampered.equals(r.body)).toBe(false);
    await expect(verify({ ...r, body: tampered })).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verify(r, 'not-the-secret')).rejects.toBeInstanceOf(WebhookVerificationError);
    const { 'x-razorpay-signature': _gone, ...unsigned } = r.headers;
    await expect(verify({ ...r, headers: unsigned })).rejects.toThrow(/missing X-Razorpay-Signature/);
    await expect(
      verify({ ...r, headers: { ...r.headers, 'x-razorpay-signature': 'zz-not-hex' } }),
    ).rejects.toBeInstanceOf(WebhookVerificationError);

    await control('POST', '/events', { type: 'subscription.activated', target, signature: 'bad' });
    await expect(verify(received[1])).rejects.toThrow(/does not match/);
  });

  it('a redelivery resends the same bytes and keeps the event id', async () => {
    const sentIn = Math.floor(Date.now() / 1000);
    const first = await control('POST', '/events', { type: 'payment.failed', target });
    // Into a later second (the body's created_at resolution), so a rebuilt body would differ at least there.
    await until(
      'a later second',
      async () => Math.floor(Date.now() / 1000),
      (now) => now > sentIn + 1,
    );
    const again = await control('POST', '/events', { type: 'payment.failed', target, id: first.id });
    expect(again.id).toBe(first.id);
    // By the X-Razorpay-Event-Id it was sent with, too.
    const byHeader = await control('POST', '/events', {
      type: 'payment.failed',
      target,
      id: received[0].headers['x-razorpay-event-id'],
    });
    expect(byHeader.id).toBe(first.id);
    expect(received).toHaveLength(3);
    for (const r of received.slice(1)) {
      expect(r.body.equals(received[0].body)).toBe(true);
      expect(r.headers['x-razorpay-event-id']).toBe(received[0].headers['x-razorpay-event-id']);
    }
    const events = await Promise.all(received.map((r) => verify(r)));
    expect(events.map((e) => e.id)).toEqual([first.id, first.id, first.id]);
    expect(events[0].kind).toBe('payment_failed');
  });

  it('takes the event id from the signed body, never from X-Razorpay-Event-Id', async () => {
    const secret = 'whsec_unit';
    const signed = (body: string, eventId?: string) => ({
      headers: {
        'x-razorpay-signature': crypto.createHmac('sha256', secret).update(body).digest('hex'),
        ...(eventId ? { 'x-razorpay-event-id': eventId } : {}),
      },
      rawBody: Buffer.from(body),
      secret,
    });
    const body = JSON.stringify({
      entity: 'event',
      account_id: 'acc_1',
      event: 'payment.captured',
      contains: ['payment'],
      payload: { payment: { entity: { id: 'pay_1', customer_id: 'cust_1' } } },
      created_at: 1700000000,
    });
    // One signed body replayed under three ids (and none) is one event.
    const ids = await Promise.all(
      ['evt_A', 'evt_B', 'evt_C', undefined].map(async (h) => (await adapter.verifyWebhook(signed(body, h))).id),
    );
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBe(`rzp_evt_${crypto.createHash('sha256').update(body).digest('hex').slice(0, 32)}`);
    // A different body (here one second later) is a different event.
    const other = body.replace('1700000000', '1700000001');
    expect((await adapter.verifyWebhook(signed(other, 'evt_A'))).id).not.toBe(ids[0]);
  });

  it('live-mode events say so', async () => {
    await control('POST', '/events', { type: 'refund.processed', target, data: { mode: 'live' } });
    const ev = await verify(received[0]);
    expect(ev).toMatchObject({ mode: 'live', kind: 'refunded' });
    expect(JSON.parse(received[0].body.toString()).contains).toEqual(['refund', 'payment']);
  });

  it('maps Razorpay events to normalised kinds', () => {
    const table: [string, number | undefined, string][] = [
      ['subscription.authenticated', undefined, 'subscription_created'],
      ['subscription.activated', undefined, 'subscription_created'],
      ['subscription.charged', 1, 'payment_succeeded'],
      ['subscription.charged', 2, 'renewed'],
      ['subscription.pending', undefined, 'grace_period'],
      ['subscription.halted', undefined, 'expired'],
      ['subscription.completed', undefined, 'expired'],
      ['subscription.cancelled', undefined, 'subscription_canceled'],
      ['subscription.updated', undefined, 'subscription_updated'],
      ['payment.captured', undefined, 'payment_succeeded'],
      ['payment.failed', undefined, 'payment_failed'],
      ['payment_link.paid', undefined, 'payment_succeeded'],
      ['refund.processed', undefined, 'refunded'],
      ['payment.refunded', undefined, 'refunded'],
      ['payment.authorized', undefined, 'other'],
      ['order.paid', undefined, 'other'],
    ];
    for (const [type, paid, kind] of table)
      expect([type, kindOf(type, paid === undefined ? undefined : { paid_count: paid })]).toEqual([type, kind]);
  });
});

describe('psp_c checkout control', () => {
  const ctx = (): ProviderContext => ({
    baseUrl: emu.url,
    mode: 'test',
    credential: account.credentials.test,
    accountRef: account.account,
  });
  const spec: ProductSpec = {
    product_id: '22222222-2222-4222-8222-222222222222',
    tenant_id: '11111111-1111-4111-8111-111111111111',
    sku: 'pro_monthly',
    name: 'Pro monthly',
    type: 'subscription',
    tier: 'monthly',
    version: 1,
    prices: [{ country: 'IN', currency: 'INR', amount_minor: 29_900 }],
  };

  it('creates customer, subscription and payment and sends its signed events in order', async () => {
    await adapter.upsertPrices(ctx(), 'x', spec, 'k');
    const out = await control('POST', '/checkout', {
      sku: 'pro_monthly',
      email: 'buyer@example.com',
      target,
      app_user_id: 'user-42',
    });
    expect(out.subscription_id).toMatch(/^sub_/);
    expect(out.customer_id).toMatch(/^cust_/);
    expect(out.events.map((e: { type: string }) => e.type)).toEqual([
      'payment.captured',
      'subscription.activated',
      'subscription.charged',
    ]);
    expect(out.events.every((e: { status: number }) => e.status === 200)).toBe(true);

    expect(received.map((r) => JSON.parse(r.body.toString()).event)).toEqual([
      'payment.captured',
      'subscription.activated',
      'subscription.charged',
    ]);
    const events = await Promise.all(received.map((r) => verify(r)));
    expect(events.map((e) => e.id)).toEqual(out.events.map((e: { id: string }) => e.id));
    expect(events.map((e) => e.kind)).toEqual(['payment_succeeded', 'subscription_created', 'payment_succeeded']);
    for (const e of events) {
      expect(e).toMatchObject({
        account_ref: account.account,
        mode: 'test',
        subscription_external_id: out.subscription_id,
        customer_external_id: out.customer_id,
        email: 'buyer@example.com',
        app_user_id: 'user-42',
        // Not from the notes (the buyer's): the plan the subscription is on names it (issue 42).
        sku: null,
        trial_start: null,
        trial_end: null,
      });
    }
    const plan = events[1].price_ref!;
    expect(plan).toMatch(/^plan_/);
    expect(events.map((e) => e.price_ref ?? null)).toEqual([null, plan, plan]);
    expect(await adapter.priceOfSubscription!(ctx(), out.subscription_id)).toBe(plan);
    expect(await adapter.skuOfPrice!(ctx(), plan)).toBe('pro_monthly');
    expect(await adapter.skuOfPrice!(ctx(), 'plan_nosuchplan00')).toBeNull();
    expect(Date.parse(events[2].current_period_end!)).toBeGreaterThan(Date.now() + 25 * 86_400_000);

    const auth = `Basic ${Buffer.from(`${account.credentials.test.key_id}:${account.credentials.test.key_secret}`).toString('base64')}`;
    const sub = await (
      await fetch(`${emu.url}/v1/subscriptions/${out.subscription_id}`, { headers: { authorization: auth } })
    ).json();
    expect(sub).toMatchObject({
      entity: 'subscription',
      status: 'active',
      customer_id: out.customer_id,
      paid_count: 1,
      notes: { sku: 'pro_monthly', app_user_id: 'user-42', email: 'buyer@example.com' },
    });
    const pay = JSON.parse(received[0].body.toString()).payload.payment.entity;
    expect(pay).toMatchObject({ amount: 29_900, currency: 'INR', status: 'captured', email: 'buyer@example.com' });
  });

  it('a trial checkout authenticates now and starts billing at the trial end', async () => {
    const out = await control('POST', '/checkout', {
      sku: 'pro_monthly',
      email: 'trial@example.com',
      target,
      trial_days: 7,
    });
    expect(out.events.map((e: { type: string }) => e.type)).toEqual(['subscription.authenticated']);
    const ev = await verify(received[0]);
    expect(ev.kind).toBe('subscription_created');
    expect(ev.subscription_external_id).toBe(out.subscription_id);
    const trialEnd = Date.parse(ev.trial_end!);
    expect(Math.abs(trialEnd - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
    expect(Date.parse(ev.trial_start!)).toBeLessThanOrEqual(Date.now());
  });

  it('later events about the checkout’s subscription carry and change the stored one', async () => {
    const out = await control('POST', '/checkout', {
      sku: 'pro_monthly',
      email: 'leaver@example.com',
      target,
      app_user_id: 'user-7',
    });
    receiver.clear();
    await control('POST', '/events', {
      type: 'subscription.cancelled',
      target,
      data: { subscription_id: out.subscription_id },
    });
    const ev = await verify(received[0]);
    expect(ev).toMatchObject({
      kind: 'subscription_canceled',
      subscription_external_id: out.subscription_id,
      app_user_id: 'user-7',
      email: 'leaver@example.com',
    });
    const s = await control('GET', '/state');
    expect(s.subscriptions.find((x: { id: string }) => x.id === out.subscription_id).status).toBe('cancelled');
  });
});
