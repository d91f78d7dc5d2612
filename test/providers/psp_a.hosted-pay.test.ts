import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import { getOrPostControlFor } from '../helpers/emulator-control';

/** The hosted checkout page pays: a form POST stores the purchase and sends signed webhooks to the registered endpoint. */
let emu: RunningEmulator;
let receiver: http.Server;
let target: string;
let received: { headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
let account: { account: string; webhook_secret: string; credentials: { test: { secret_key: string } } };
let linkUrl: string;
const control = getOrPostControlFor(() => emu.url, { strict: true });
const adapter = createPspAAdapter();

async function stripe(p: string, form: Record<string, string>) {
  const res = await fetch(`${emu.url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.credentials.test.secret_key}` },
    body: new URLSearchParams(form),
  });
  return (await res.json()) as Record<string, any>;
}
const pay = (url: string, form: Record<string, string>) =>
  fetch(url, { method: 'POST', body: new URLSearchParams(form) });

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  account = await control('/accounts', {});
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  target = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/api/webhooks/psp_a`;
  const prod = await stripe('/v1/products', { name: 'Pro', 'metadata[sku]': 'pro_m' });
  const price = await stripe('/v1/prices', {
    product: prod.id,
    currency: 'usd',
    unit_amount: '500',
    'recurring[interval]': 'month',
  });
  const link = await stripe('/v1/payment_links', {
    'line_items[0][price]': price.id,
    'line_items[0][quantity]': '1',
    'metadata[sku]': 'pro_m',
  });
  linkUrl = link.url;
});
beforeEach(() => {
  received = [];
});
afterAll(async () => {
  await emu?.close();
  await new Promise((r) => receiver?.close(r));
});

describe('psp_a hosted checkout page', () => {
  it('shows a Pay form carrying client_reference_id', async () => {
    const html = await (await fetch(`${linkUrl}?client_reference_id=user%3C1%3E`)).text();
    expect(html).toContain('id="pay"');
    expect(html).toContain('value="user&lt;1&gt;"'); // escaped
  });

  it('without a registered webhook endpoint, paying fails and sends nothing', async () => {
    const res = await pay(linkUrl, { email: 'a@example.com', client_reference_id: 'u-1' });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/No webhook endpoint/);
    expect(received).toEqual([]);
  });

  it('paying sends the checkout events, signed, with the app user, to the registered endpoint', async () => {
    expect(
      await (
        await fetch(`${emu.url}/__control/webhook_endpoints`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"url":"nope"}',
        })
      ).status,
    ).toBe(400);
    await control('/webhook_endpoints', { url: target, account: account.account });
    const res = await pay(linkUrl, { email: 'a@example.com', client_reference_id: 'u-1' });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/window\.close\(\)/);
    expect(received.map((r) => JSON.parse(r.body.toString()).type)).toEqual([
      'payment_intent.succeeded',
      'customer.subscription.created',
      'invoice.payment_succeeded',
    ]);
    const ev = await adapter.verifyWebhook({
      headers: received[1].headers as Record<string, string>,
      rawBody: received[1].body,
      secret: account.webhook_secret,
    });
    expect(ev).toMatchObject({
      kind: 'subscription_created',
      account_ref: account.account,
      mode: 'test',
      sku: 'pro_m',
      app_user_id: 'u-1',
    });
  });

  it('an unknown link is a 404 page', async () => {
    const res = await pay(`${emu.url}/b/test_doesnotexist`, { email: 'a@example.com' });
    expect(res.status).toBe(404);
  });
});
