import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { testServices } from '../helpers/api';
import { signUpUser } from '../../db/dashboard-users';
import { DEFAULT_LIMITS } from '../../domain/login-limits';
import { hashPassword } from '../../runtime/passwords';
import { dashboardHarness, uniqueEmail } from './helpers/browser';

const PASSWORD = 'the owner’s own password';

async function owner(): Promise<string> {
  const email = uniqueEmail('owner');
  await signUpUser(testDb(), { email, passwordHash: await hashPassword(PASSWORD) });
  return email;
}

/** A form session as a browser holds it: the anonymous cookie and the CSRF token bound to it. */
async function formSession(root: string, path = '/login', headers: Record<string, string> = {}) {
  const r = await fetch(root + path, { headers });
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await r.text())![1];
  return (form: Record<string, string>, extra: Record<string, string> = {}) =>
    fetch(root + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers, ...extra },
      body: new URLSearchParams({ _csrf: csrf, ...form }),
    });
}

/** One request from a chosen local address (fetch cannot pick its source address). */
function rawRequest(
  root: string,
  localAddress: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(root + path, { method, headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('login limits with no trusted proxy (issue #18, item 4)', () => {
  const h = dashboardHarness();

  it(`20 concurrent wrong passwords for one account: at most ${DEFAULT_LIMITS.pair.max} are checked, the rest refused before verifying`, async () => {
    const email = await owner();
    const post = await formSession(h.api.dashboardRoot);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => post({ email, password: 'a wrong guess' }).then((r) => r.status)),
    );
    const checked = statuses.filter((s) => s === 401).length;
    expect(checked).toBe(DEFAULT_LIMITS.pair.max);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - checked);
  });

  it('a new X-Forwarded-For from a peer that is not a trusted proxy resets nothing: the address limit holds across accounts', async () => {
    // A loopback address of this test's own (all of 127/8 reaches the listener), so its
    // failures count against no other test's client address.
    const peer = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;
    const get = await rawRequest(h.api.dashboardRoot, peer, 'GET', '/login', {});
    const cookie = (get.headers['set-cookie'] ?? [])[0].split(';')[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(get.body)![1];
    const guess = (i: number) =>
      rawRequest(
        h.api.dashboardRoot,
        peer,
        'POST',
        '/login',
        {
          cookie,
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': `203.0.113.${i % 250}, 198.51.100.${i % 250}`,
        },
        new URLSearchParams({ _csrf: csrf, email: uniqueEmail(`spray${i}`), password: 'wrong' }).toString(),
      );
    // Spraying many accounts: each guess a new account and a new claimed address.
    for (let i = 0; i < DEFAULT_LIMITS.ip.max; i++) expect((await guess(i)).status, `guess ${i}`).toBe(401);
    const refused = await guess(DEFAULT_LIMITS.ip.max);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('a new X-Forwarded-For does not reset one account’s limit either', async () => {
    const email = await owner();
    const post = await formSession(h.api.dashboardRoot);
    for (let i = 0; i < DEFAULT_LIMITS.pair.max; i++) {
      expect((await post({ email, password: 'wrong' }, { 'x-forwarded-for': `203.0.113.${i + 1}` })).status).toBe(401);
    }
    expect((await post({ email, password: 'wrong' }, { 'x-forwarded-for': '198.51.100.99' })).status).toBe(429);
  });
});

describe('behind a trusted proxy: the attacker is throttled, the owner still gets in (issue #18, items 4–5)', () => {
  const base = testServices().config;
  const h = dashboardHarness({
    config: {
      ...base,
      trustedProxies: ['127.0.0.1', '::1'],
      dashboardLimits: { ...base.dashboardLimits, signup: { max: 3, windowSeconds: 3600 } },
    },
  });

  it('after a 20-request burst from one address, the owner logs in from theirs in Chromium; the attacker’s address stays refused', async () => {
    const email = await owner();
    const attacker = { 'x-forwarded-for': '203.0.113.50' };
    const post = await formSession(h.api.dashboardRoot, '/login', attacker);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => post({ email, password: 'guess' }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(DEFAULT_LIMITS.pair.max);
    // Even the right password from the attacker's address waits out the window.
    expect((await post({ email, password: PASSWORD })).status).toBe(429);
    // A client-written hop left of the proxy's does not make a new address either.
    expect((await post({ email, password: 'guess' }, { 'x-forwarded-for': '192.0.2.1, 203.0.113.50' })).status).toBe(
      429,
    );

    const ctx = await h.browser.newContext({ extraHTTPHeaders: { 'x-forwarded-for': '198.51.100.7' } });
    const p = await ctx.newPage();
    await p.goto(`${h.api.dashboardRoot}/login`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.waitForURL('**/overview');
    await ctx.close();
  });

  it('Secure cookies when the trusted proxy says the request came over TLS', async () => {
    const c =
      (await fetch(`${h.api.dashboardRoot}/signup`, { headers: { 'x-forwarded-proto': 'https' } })).headers.get(
        'set-cookie',
      ) ?? '';
    expect(c.toLowerCase()).toContain('; secure');
  });

  it('sign-ups are limited per address in Postgres; another address may still sign up', async () => {
    const from = (ip: string) => formSession(h.api.dashboardRoot, '/signup', { 'x-forwarded-for': ip });
    const post = await from('203.0.113.77');
    const emails = [0, 1, 2, 3].map(() => uniqueEmail('burst'));
    const statuses: number[] = [];
    for (const email of emails) statuses.push((await post({ email, password: 'a long enough password' })).status);
    expect(statuses).toEqual([303, 303, 303, 429]);
    expect(await testDb()('dashboard_users').whereIn('email', emails)).toHaveLength(3);
    expect(
      (await (await from('198.51.100.77'))({ email: uniqueEmail('other'), password: 'a long enough password' })).status,
    ).toBe(303);
  });
});
