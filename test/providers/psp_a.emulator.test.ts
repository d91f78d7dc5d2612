import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulators/common/host';
import { createEmulator } from '../../emulators/psp_a/emulator';
import { parseForm } from '../../emulators/psp_a/form';

let emu: RunningEmulator;
let acct: {
  account: string;
  credentials: { test: { secret_key: string }; live: { secret_key: string } };
  webhook_secret: string;
};

async function createAccount(id?: string) {
  const res = await fetch(`${emu.url}/__control/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(id ? { account: id } : {}),
  });
  return (await res.json()) as typeof acct;
}

/** A raw Stripe call as any HTTP client would make it: form body, Bearer key. */
async function stripe(method: string, p: string, body = '', headers: Record<string, string> = {}) {
  const res = await fetch(`${emu.url}${p}`, {
    method,
    headers: {
      authorization: `Bearer ${acct.credentials.test.secret_key}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: method === 'GET' ? undefined : body,
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  emu = await startEmulator(createEmulator, { port: 0 });
  acct = await createAccount();
});
afterAll(async () => {
  await emu?.close();
});

describe('psp_a emulator wire protocol', () => {
  it('parses Stripe form encoding: nested hashes, indexed arrays, expand[]', () => {
    expect(
      parseForm(
        'name=A+B&metadata[sku]=x%20y&recurring[interval]=month&line_items[0][price]=p1&line_items[0][quantity]=1&line_items[1][price]=p2&expand[]=a&expand[]=b&currency_options[eur][unit_amount]=899',
      ),
    ).toEqual({
      name: 'A B',
      metadata: { sku: 'x y' },
      recurring: { interval: 'month' },
      line_items: [{ price: 'p1', quantity: '1' }, { price: 'p2' }],
      expand: ['a', 'b'],
      currency_options: { eur: { unit_amount: '899' } },
    });
  });

  it('answers accounts with the shared control shape', async () => {
    expect(acct.account).toMatch(/^acct_/);
    expect(acct.credentials.test.secret_key).toMatch(/^sk_test_\w{32,}$/);
    expect(acct.credentials.live.secret_key).toMatch(/^sk_live_\w{32,}$/);
    expect(acct.webhook_secret).toMatch(/^whsec_/);
    const again = await createAccount(acct.account);
    expect(again).toEqual(acct);
    const named = await createAccount('acct_named');
    expect(named.account).toBe('acct_named');
  });

  it("checks Stripe's auth: missing, invalid and publishable keys, and Stripe-Account access", async () => {
    const none = await fetch(`${emu.url}/v1/products`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as any).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('You did not provide an API key'),
    });
    const wrong = await fetch(`${emu.url}/v1/products`, {
      headers: { authorization: 'Bearer sk_test_abcdefghijklmnop1234' },
    });
    const wrongBody = (await wrong.json()) as any;
    expect(wrong.status).toBe(401);
    expect(wrongBody.error.message).toMatch(/sk_test_\*{16}1234/);
    expect(wrongBody.error.message).not.toContain('abcdefghijklmnop');
    const basic = await fetch(`${emu.url}/v1/products`, {
      headers: { authorization: `Basic ${Buffer.from(`${acct.credentials.test.secret_key}:`).toString('base64')}` },
    });
    expect(basic.status).toBe(200);
    const other = await createAccount();
    const cross = await stripe('GET', '/v1/products', '', { 'stripe-account': other.account });
    expect(cross.status).toBe(403);
    expect(cross.json.error).toMatchObject({ code: 'account_invalid', type: 'invalid_request_error' });
    const own = await stripe('GET', '/v1/account', '', { 'stripe-account': acct.account });
    expect(own.json).toMatchObject({ id: acct.account, object: 'account' });
    expect(own.headers.get('stripe-account')).toBe(acct.account);
    expect(own.headers.get('request-id')).toMatch(/^req_/);
  });

  it('honours Idempotency-Key: same key and body replays, other body is an idempotency_error', async () => {
    const first = await stripe('POST', '/v1/products', 'name=Idem&metadata[k]=v', { 'idempotency-key': 'idem-1' });
    const replay = await stripe('POST', '/v1/products', 'metadata[k]=v&name=Idem', { 'idempotency-key': 'idem-1' });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(first.json);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const conflict = await stripe('POST', '/v1/products', 'name=Other', { 'idempotency-key': 'idem-1' });
    expect(conflict.status).toBe(400);
    expect(conflict.json.error.type).toBe('idempotency_error');
    const otherPath = await stripe('POST', '/v1/coupons', 'percent_off=5', { 'idempotency-key': 'idem-1' });
    expect(otherPath.json.error?.type).toBe('idempotency_error');
    const list = await stripe('GET', '/v1/products?limit=100');
    expect(list.json.data.filter((p: any) => p.name === 'Idem')).toHaveLength(1);
  });

  it('lists newest first in Stripe envelopes with limit, starting_after and ending_before', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await stripe('POST', '/v1/coupons', `percent_off=${i + 1}&duration=forever`)).json.id);
    const page1 = await stripe('GET', '/v1/coupons?limit=2');
    expect(page1.json).toMatchObject({ object: 'list', has_more: true, url: '/v1/coupons' });
    expect(page1.json.data.map((c: any) => c.id)).toEqual([ids[4], ids[3]]);
    const page2 = await stripe('GET', `/v1/coupons?limit=2&starting_after=${ids[3]}`);
    expect(page2.json.data.map((c: any) => c.id)).toEqual([ids[2], ids[1]]);
    const back = await stripe('GET', `/v1/coupons?limit=2&ending_before=${ids[2]}`);
    expect(back.json.data.map((c: any) => c.id)).toEqual([ids[4], ids[3]]);
    expect((await stripe('GET', '/v1/coupons?limit=101')).status).toBe(400);
    expect((await stripe('GET', '/v1/coupons?starting_after=nope')).json.error.code).toBe('resource_missing');
  });

  it("answers with Stripe's error shapes", async () => {
    const unknown = await stripe('POST', '/v1/products', 'name=X&colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'parameter_unknown',
      param: 'colour',
    });
    const missing = await stripe('POST', '/v1/products', '');
    expect(missing.json.error).toMatchObject({ code: 'parameter_missing', param: 'name' });
    const notFound = await stripe('GET', '/v1/products/prod_missing');
    expect(notFound.status).toBe(404);
    expect(notFound.json.error).toMatchObject({
      code: 'resource_missing',
      param: 'id',
      message: "No such product: 'prod_missing'",
    });
    const route = await stripe('GET', '/v1/nothing_here');
    expect(route.status).toBe(404);
    expect(route.json.error.message).toMatch(/Unrecognized request URL/);
    const dup = await stripe('POST', '/v1/products', 'id=prod_dup&name=A');
    expect(dup.status).toBe(200);
    expect((await stripe('POST', '/v1/products', 'id=prod_dup&name=A')).json.error).toMatchObject({
      code: 'resource_already_exists',
      param: 'id',
    });
  });

  it('keeps metadata semantics and price immutability', async () => {
    const p = (await stripe('POST', '/v1/products', 'name=Meta&metadata[a]=1&metadata[b]=2')).json;
    const updated = (await stripe('POST', `/v1/products/${p.id}`, 'metadata[a]=&metadata[c]=3')).json;
    expect(updated.metadata).toEqual({ b: '2', c: '3' });
    const price = (
      await stripe(
        'POST',
        '/v1/prices',
        `product=${p.id}&currency=usd&unit_amount=500&recurring[interval]=year&currency_options[eur][unit_amount]=450`,
      )
    ).json;
    expect(price).toMatchObject({
      type: 'recurring',
      recurring: { interval: 'year', interval_count: 1 },
      unit_amount: 500,
    });
    expect(price.currency_options).toBeUndefined();
    const expanded = (await stripe('GET', `/v1/prices/${price.id}?expand[]=currency_options&expand[]=product`)).json;
    expect(expanded.currency_options.eur.unit_amount).toBe(450);
    expect(expanded.currency_options.usd.unit_amount).toBe(500);
    expect(expanded.product.id).toBe(p.id);
    expect((await stripe('POST', `/v1/prices/${price.id}`, 'unit_amount=600')).json.error.code).toBe(
      'parameter_unknown',
    );
    const link = (
      await stripe(
        'POST',
        '/v1/payment_links',
        `line_items[0][price]=${price.id}&line_items[0][quantity]=1&metadata[app_id]=a1`,
      )
    ).json;
    expect(link).toMatchObject({ object: 'payment_link', active: true, currency: 'usd', metadata: { app_id: 'a1' } });
    const items = (await stripe('GET', `/v1/payment_links/${link.id}/line_items`)).json;
    expect(items.data[0]).toMatchObject({ object: 'item', quantity: 1, price: { id: price.id } });
    const page = await fetch(link.url);
    expect(page.status).toBe(200);
    await stripe('POST', `/v1/prices/${price.id}`, 'active=false');
    expect(
      (await stripe('POST', '/v1/payment_links', `line_items[0][price]=${price.id}&line_items[0][quantity]=1`)).status,
    ).toBe(400);
  });

  it('keeps accounts and objects across a restart when given a state file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'psp_a-emu-'));
    const file = path.join(dir, 'psp_a.json');
    try {
      const first = await startEmulator(createEmulator, { port: 0, stateFile: file });
      const made = (await (
        await fetch(`${first.url}/__control/accounts`, { method: 'POST', body: '{}' })
      ).json()) as typeof acct;
      const key = made.credentials.test.secret_key;
      const created = (await (
        await fetch(`${first.url}/v1/products`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: 'name=Durable',
        })
      ).json()) as { id: string };
      await first.close();
      const second = await startEmulator(createEmulator, { port: 0, stateFile: file });
      const res = await fetch(`${second.url}/v1/products/${created.id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { name: string }).name).toBe('Durable');
      await second.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
