import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { WebhookVerificationError } from '../../providers/errors';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import type { NormalisedEvent } from '../../providers/types';
import { getOrPostControlFor } from '../helpers/emulator-control';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

let emu: RunningEmulator;
let receiver: WebhookReceiver;
let target: string;
let received: ReceivedWebhook[] = [];
let account: { account: string; webhook_secret: string };
const adapter = createPspAAdapter();

const control = getOrPostControlFor(() => emu.url, { strict: true });

const verify = (r: ReceivedWebhook, secret = account.webhook_secret, now?: Date) =>
  adapter.verifyWebhook({ headers: r.headers as Record<string, string>, rawBody: r.body, secret, now });

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  account = await control('/accounts', {});
  receiver = await startWebhookReceiver('psp_a');
  target = receiver.url;
  received = receiver.received;
});
beforeEach(() => {
  receiver.clear();
});
afterAll(async () => {
  await emu?.close();
  await receiver?.close();
});

describe('psp_a webhook verification', () => {
  it("accepts the emulator's real signature and reads the event", async () => {
    const sent = await control<{ id: string; status: number }>('/events', {
      type: 'customer.subscription.updated',
      target,
      data: { metadata: { sku: 'pro_m', app_user_id: 'u-1' } },
    });
    expect(sent.status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0].headers['stripe-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const ev = await verify(received[0]);
    expect(ev).toMatchObject({
      provider: 'psp_a',
      id: sent.id,
      type: 'customer.subscription.updated',
      kind: 'subscription_updated',
      account_ref: account.account,
      mode: 'test',
      sku: 'pro_m',
      app_user_id: 'u-1',
    });
    expect(ev.subscription_external_id).toMatch(/^sub_/);
    expect(ev.customer_external_id).toMatch(/^cus_/);
    expect(ev.current_period_end).toMatch(/^\d{4}-/);
    expect((ev.payload as { object: string }).object).toBe('event');
  });

  it('signs the raw body as Stripe does: HMAC-SHA256 over "t.body" with the whsec secret', async () => {
    await control('/events', { type: 'charge.refunded', target });
    const { headers, body } = received[0];
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(headers['stripe-signature']))!;
    expect(
      crypto
        .createHmac('sha256', account.webhook_secret)
        .update(`${t}.${body.toString('utf8')}`)
        .digest('hex'),
    ).toBe(v1);
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('rejects a tampered body, a wrong secret, a bad signature and a timestamp outside five minutes', async () => {
    await control('/events', { type: 'invoice.payment_succeeded', target });
    const good = received[0];
    const tampered = {
      ...good,
      body: Buffer.from(good.body.toString('utf8').replace('"livemode": false', '"livemode": true')),
    };
    expect(tampered.body.equals(good.body)).toBe(false);
    await expect(verify(tampered)).rejects.toThrow(WebhookVerificationError);
    await expect(verify(tampered)).rejects.toMatchObject({ reason: 'signature mismatch' });
    await expect(verify(good, 'whsec_not_the_right_secret')).rejects.toMatchObject({ reason: 'signature mismatch' });
    await expect(verify(good, '')).rejects.toThrow(WebhookVerificationError);
    await expect(verify({ ...good, headers: {} })).rejects.toMatchObject({ reason: 'missing Stripe-Signature header' });
    await expect(verify({ ...good, headers: { 'stripe-signature': 'garbage' } })).rejects.toMatchObject({
      reason: 'malformed Stripe-Signature header',
    });

    const sixMinutes = 6 * 60 * 1000;
    await expect(verify(good, account.webhook_secret, new Date(Date.now() + sixMinutes))).rejects.toMatchObject({
      reason: 'timestamp outside tolerance',
    });
    await expect(verify(good, account.webhook_secret, new Date(Date.now() - sixMinutes))).rejects.toMatchObject({
      reason: 'timestamp outside tolerance',
    });
    await expect(verify(good, account.webhook_secret, new Date(Date.now() + 4 * 60 * 1000))).resolves.toMatchObject({
      kind: 'payment_succeeded',
    });

    await control('/events', { type: 'invoice.payment_succeeded', target, signature: 'bad' });
    await expect(verify(received[1])).rejects.toMatchObject({ reason: 'signature mismatch' });
  });

  it('refuses a signature timestamp from the future however the header is written', async () => {
    await control('/events', { type: 'invoice.payment_succeeded', target });
    const good = received[0];
    const nowSec = Math.floor(Date.now() / 1000);
    const sign = (t: number) =>
      crypto
        .createHmac('sha256', account.webhook_secret)
        .update(`${t}.${good.body.toString('utf8')}`)
        .digest('hex');
    const withHeader = (value: string) => ({ ...good, headers: { 'stripe-signature': value } });
    const future = nowSec + 30 * 86_400;
    await expect(verify(withHeader(`t=${future},v1=${sign(future)}`))).rejects.toMatchObject({
      reason: 'timestamp outside tolerance',
    });
    // stripe-node verifies against the last t=; a first t= of "now" must not hide it.
    await expect(verify(withHeader(`t=${nowSec},t=${future},v1=${sign(future)}`))).rejects.toMatchObject({
      reason: 'timestamp outside tolerance',
    });
    // Inside the window either way it is accepted.
    await expect(verify(withHeader(`t=${nowSec + 240},v1=${sign(nowSec + 240)}`))).resolves.toMatchObject({
      kind: 'payment_succeeded',
    });
    await expect(verify(withHeader(`t=${nowSec - 240},v1=${sign(nowSec - 240)}`))).resolves.toMatchObject({
      kind: 'payment_succeeded',
    });
  });

  it('maps the eight subscribed event types to their kinds', async () => {
    const expected: Record<string, NormalisedEvent['kind']> = {
      'customer.subscription.created': 'subscription_created',
      'customer.subscription.updated': 'subscription_updated',
      'customer.subscription.deleted': 'subscription_canceled',
      'invoice.payment_succeeded': 'payment_succeeded',
      'invoice.payment_failed': 'payment_failed',
      'payment_intent.succeeded': 'payment_succeeded',
      'payment_intent.payment_failed': 'payment_failed',
      'charge.refunded': 'refunded',
      'product.updated': 'other',
    };
    for (const [type, kind] of Object.entries(expected)) {
      receiver.clear();
      await control('/events', { type, target });
      const ev = await verify(received[0]);
      expect(ev.type).toBe(type);
      expect(ev.kind).toBe(kind);
      expect(ev.account_ref).toBe(account.account);
    }
  });

  it('reuses the event id for a redelivery and keeps live mode apart', async () => {
    const first = await control<{ id: string }>('/events', {
      type: 'customer.subscription.created',
      target,
      id: 'evt_fixed_1',
    });
    const again = await control<{ id: string }>('/events', {
      type: 'customer.subscription.created',
      target,
      id: 'evt_fixed_1',
    });
    expect(first.id).toBe('evt_fixed_1');
    expect(again.id).toBe('evt_fixed_1');
    const [a, b] = await Promise.all(received.map((r) => verify(r)));
    expect(a.id).toBe(b.id);
    expect(JSON.parse(received[0].body.toString())).toEqual(JSON.parse(received[1].body.toString()));

    await control('/events', { type: 'payment_intent.succeeded', target, mode: 'live' });
    expect((await verify(received[2])).mode).toBe('live');
  });
});

describe('psp_a checkout control', () => {
  it('sends payment_intent.succeeded, customer.subscription.created, invoice.payment_succeeded in order, each signed', async () => {
    const email = `buyer-${crypto.randomBytes(3).toString('hex')}@example.com`;
    const out = await control<{
      subscription_id: string;
      customer_id: string;
      events: { id: string; type: string; status: number }[];
    }>('/checkout', {
      sku: 'pro_monthly',
      email,
      target,
      trial_days: 7,
      app_user_id: 'user-42',
    });
    expect(out.events.map((e) => e.type)).toEqual([
      'payment_intent.succeeded',
      'customer.subscription.created',
      'invoice.payment_succeeded',
    ]);
    expect(out.events.every((e) => e.status === 200)).toBe(true);
    expect(received).toHaveLength(3);
    const events = await Promise.all(received.map((r) => verify(r)));
    expect(events.map((e) => e.id)).toEqual(out.events.map((e) => e.id));
    expect(events.map((e) => e.kind)).toEqual(['payment_succeeded', 'subscription_created', 'payment_succeeded']);
    for (const ev of events) {
      expect(ev).toMatchObject({
        account_ref: account.account,
        mode: 'test',
        sku: 'pro_monthly',
        email,
        customer_external_id: out.customer_id,
        app_user_id: 'user-42',
      });
    }
    const [, created, invoice] = events;
    expect(created.subscription_external_id).toBe(out.subscription_id);
    expect(invoice.subscription_external_id).toBe(out.subscription_id);
    expect((created.payload as { data: { object: { status: string } } }).data.object.status).toBe('trialing');
    expect(created.trial_start).not.toBeNull();
    expect(Date.parse(created.trial_end!) - Date.parse(created.trial_start!)).toBe(7 * 86400 * 1000);

    const state = await control<Record<string, Record<string, unknown>[]>>('/state');
    expect(state.subscriptions.find((s) => s.id === out.subscription_id)).toMatchObject({
      status: 'trialing',
      customer: out.customer_id,
    });
    expect(state.customers.find((c) => c.id === out.customer_id)).toMatchObject({ email });
    expect(state.events.filter((e) => out.events.some((o) => o.id === e.id))).toHaveLength(3);

    // A refund afterwards refers to the charge of that checkout.
    receiver.clear();
    await control('/events', { type: 'charge.refunded', target });
    const refund = await verify(received[0]);
    expect(refund).toMatchObject({
      kind: 'refunded',
      customer_external_id: out.customer_id,
      sku: 'pro_monthly',
      email,
    });
    expect((refund.payload as { data: { object: { refunded: boolean } } }).data.object.refunded).toBe(true);
  });

  it('charges the price of the SKU payment link, live when asked, active without trial', async () => {
    const out = await control<{ subscription_id: string; events: { status: number }[] }>('/checkout', {
      sku: 'basic',
      email: 'a@example.com',
      target,
      mode: 'live',
    });
    const events = await Promise.all(received.map((r) => verify(r)));
    expect(events.every((e) => e.mode === 'live')).toBe(true);
    const sub = events[1].payload as { data: { object: { status: string; trial_start: unknown; livemode: boolean } } };
    expect(sub.data.object).toMatchObject({ status: 'active', trial_start: null, livemode: true });
    expect(events[1].subscription_external_id).toBe(out.subscription_id);
  });
});
