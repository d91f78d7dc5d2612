import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpUser } from '../../db/dashboard-users';
import { hashPassword } from '../../runtime/passwords';
import { DEVICE_COOKIE } from '../../api/dashboard/device-cookie';
import { DEFAULT_LIMITS } from '../../domain/login-limits';
import { freePort } from '../../runtime/ports';
import { generateMasterKey } from '../../vault/vault';
import { startApiProcess, type ApiProcess } from '../helpers/api-process';
import { testDb } from '../helpers/db';
import { until } from '../helpers/until';

const PASSWORD = 'the owner’s own password';
const email = (tag: string) => `${tag}-${crypto.randomBytes(4).toString('hex')}@example.test`;
const ipv4 = () => `198.18.${crypto.randomInt(256)}.${1 + crypto.randomInt(254)}`;
function ipv6Subnet() {
  const hex = () => crypto.randomBytes(2).readUInt16BE().toString(16);
  const prefix = `2001:db8:${hex()}:${hex()}`;
  return { prefix, at: (i: number) => `${prefix}:${(i + 1).toString(16)}:${hex()}:${hex()}:${hex()}` };
}

/**
 * A browser as the dashboard sees it: its cookies (anonymous form cookie, session, device
 * cookie) and the address the trusted proxy reports for it (X-Forwarded-For).
 */
class Browser {
  readonly jar = new Map<string, string>();
  constructor(
    private readonly root: string,
    public address: string,
  ) {}

  private cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const [name, value] = [pair.slice(0, i), pair.slice(i + 1)];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async post(path: '/login' | '/signup', form: Record<string, string>): Promise<Response> {
    const get = await fetch(this.root + path, {
      headers: { cookie: this.cookieHeader(), 'x-forwarded-for': this.address },
      redirect: 'manual',
    });
    this.keep(get);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await get.text())?.[1];
    if (!csrf) throw new Error(`no form at ${path} (status ${get.status})`);
    const res = await fetch(this.root + path, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': this.address,
      },
      body: new URLSearchParams({ _csrf: csrf, ...form }),
    });
    this.keep(res);
    await res.text();
    return res;
  }

  /** Logged out (the session cookie gone), as after "Log out" or a session's expiry; the device cookie stays. */
  forgetSession(): void {
    this.jar.delete('dash_session');
  }
}

/**
 * Issue #28, item 5: the dashboard's login and sign-up limits against many addresses. The real
 * api process behind a trusted proxy; each X-Forwarded-For is another client.
 */
describe('login and sign-up limits against many addresses (issue #28, item 5)', () => {
  let api: ApiProcess;
  let root: string;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    api = await startApiProcess({
      TRUSTED_PROXIES: '127.0.0.1,::1',
      MASTER_KEY: generateMasterKey(),
      SIGNUPS_PER_ADDRESS_PER_HOUR: '3',
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
    });
    root = `http://127.0.0.1:${api.dashboardPort}`;
  });
  afterAll(async () => api?.stop());

  async function owner(): Promise<string> {
    const e = email('owner');
    await signUpUser(testDb(), { email: e, passwordHash: await hashPassword(PASSWORD) });
    return e;
  }
  const metric = async (name: string, labels: string) => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('50 wrong passwords from 10 addresses do not lock the owner out of a browser that has logged in before; another account’s or a forged device cookie lifts nothing', async () => {
    const account = await owner();
    // Mallory has an account of her own and logged in to it: she holds a good device cookie, for her account.
    const mallory = await owner();
    const hers = new Browser(root, ipv4());
    expect((await hers.post('/login', { email: mallory, password: PASSWORD })).status).toBe(302);
    hers.forgetSession();
    // The owner's browser logged in once (last week, say) and was given its device cookie.
    const laptop = new Browser(root, ipv4());
    const first = await laptop.post('/login', { email: account, password: PASSWORD });
    expect(first.status).toBe(302);
    expect(laptop.jar.get(DEVICE_COOKIE)).toMatch(/^d1\./);
    expect(first.headers.getSetCookie().find((c) => c.startsWith(`${DEVICE_COOKIE}=`))).toMatch(/HttpOnly/i);
    laptop.forgetSession();

    // Ten addresses, five wrong passwords each: every one is checked (each pair allows five), and
    // together they reach the account's shared ceiling.
    const attackers = Array.from({ length: 10 }, () => new Browser(root, ipv4()));
    const statuses = await Promise.all(
      attackers.map(async (b) => {
        const out: number[] = [];
        for (let i = 0; i < DEFAULT_LIMITS.pair.max; i++)
          out.push((await b.post('/login', { email: account, password: `guess ${i}` })).status);
        return out;
      }),
    );
    expect(statuses.flat().filter((s) => s === 401)).toHaveLength(DEFAULT_LIMITS.account.max);
    const eleventh = await new Browser(root, ipv4()).post('/login', { email: account, password: 'guess' });
    expect(eleventh.status).toBe(429);

    // A browser that never logged in to the account waits out the ceiling's minute, even with the right password.
    const stranger = await new Browser(root, ipv4()).post('/login', { email: account, password: PASSWORD });
    expect(stranger.status).toBe(429);
    expect(Number(stranger.headers.get('retry-after'))).toBeLessThanOrEqual(DEFAULT_LIMITS.account.windowSeconds);

    // The owner's browser, from a fresh address (a train, a phone's hotspot), gets in at once.
    laptop.address = ipv4();
    const back = await laptop.post('/login', { email: account, password: PASSWORD });
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('/overview');
    expect(laptop.jar.get('dash_session')).toBeTruthy();
    expect(
      await metric(
        'billing_dashboard_auth_attempts_total',
        '{form="login",outcome="refused",limit="account",device="none"}',
      ),
    ).toBeGreaterThanOrEqual(2);
    expect(
      await metric('billing_dashboard_auth_attempts_total', '{form="login",outcome="ok",limit="none",device="known"}'),
    ).toBeGreaterThanOrEqual(1);
    // The operator's log line names the account by id and the allowance, never the email.
    const refusal = await until(
      'the refusal’s log line',
      async () =>
        api
          .stdout()
          .split('\n')
          .find((l) => l.includes('"limit":"account"') && l.includes('dashboard log-in refused')),
      (l) => l !== undefined,
    );
    expect(JSON.parse(refusal!)).toMatchObject({
      level: 40,
      limit: 'account',
      user_id: expect.any(String),
      tenant_id: expect.any(String),
      address_key: expect.any(String),
    });
    expect(api.stdout()).not.toContain(account);

    // Mallory's cookie does not lift the owner's ceiling for her guesses, nor does one she edits or makes up.
    expect((await hers.post('/login', { email: account, password: 'guess' })).status).toBe(429);
    const real = hers.jar.get(DEVICE_COOKIE)!;
    for (const forged of [
      real.slice(0, -2) + (real.endsWith('AA') ? 'BB' : 'AA'),
      'd1.k1.1700000000.bm9uY2U.bWFj',
      real.replace(/\.\d+\./, `.${Math.floor(Date.now() / 1000) - 60}.`),
    ]) {
      hers.jar.set(DEVICE_COOKIE, forged);
      expect((await hers.post('/login', { email: account, password: PASSWORD })).status).toBe(429);
    }
  });

  it('a known device has an allowance of its own: its wrong passwords stop at the device limit', async () => {
    const account = await owner();
    const laptop = new Browser(root, ipv4());
    expect((await laptop.post('/login', { email: account, password: PASSWORD })).status).toBe(302);
    laptop.forgetSession();
    const statuses: number[] = [];
    for (let i = 0; i <= DEFAULT_LIMITS.device.max; i++) {
      laptop.address = ipv4(); // a new address each time changes nothing: the device is what is counted
      statuses.push((await laptop.post('/login', { email: account, password: 'typo' })).status);
    }
    expect(statuses).toEqual([...Array(DEFAULT_LIMITS.device.max).fill(401), 429]);
  });

  it('one IPv6 /64 is one address for log-in: many addresses in it get one pair’s five guesses', async () => {
    const account = await owner();
    const net = ipv6Subnet();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const b = new Browser(root, net.at(i));
      for (let j = 0; j < DEFAULT_LIMITS.pair.max; j++)
        statuses.push((await b.post('/login', { email: account, password: 'guess' })).status);
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(DEFAULT_LIMITS.pair.max);
    expect(statuses.filter((s) => s === 429)).toHaveLength(statuses.length - DEFAULT_LIMITS.pair.max);
    // The account's ceiling was barely touched: the owner, from another network, gets in without a device cookie.
    expect(
      (await new Browser(root, ipv6Subnet().at(0)).post('/login', { email: account, password: PASSWORD })).status,
    ).toBe(302);
  });

  it('one IPv6 /64 is one address for sign-up (3 an hour here); another /64 and IPv4-mapped spellings count as expected', async () => {
    const net = ipv6Subnet();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await new Browser(root, net.at(i)).post('/signup', {
            email: email('burst'),
            password: 'a long enough password',
          })
        ).status,
      );
    expect(statuses).toEqual([303, 303, 303, 429]);
    expect(
      (
        await new Browser(root, ipv6Subnet().at(0)).post('/signup', {
          email: email('other'),
          password: 'a long enough password',
        })
      ).status,
    ).toBe(303);
    // An IPv4 client is the same client written as IPv4-mapped IPv6.
    const v4 = ipv4();
    for (let i = 0; i < 3; i++)
      expect(
        (
          await new Browser(root, i % 2 ? `::ffff:${v4}` : v4).post('/signup', {
            email: email('v4'),
            password: 'a long enough password',
          })
        ).status,
      ).toBe(303);
    expect(
      (
        await new Browser(root, `::ffff:${v4}`).post('/signup', {
          email: email('v4'),
          password: 'a long enough password',
        })
      ).status,
    ).toBe(429);
  });
});
