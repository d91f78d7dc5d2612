import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_COOKIE } from '../../api/dashboard/device-cookie';
import { signUpUser } from '../../db/dashboard-users';
import { DEFAULT_LIMITS } from '../../domain/login-limits';
import { hashPassword } from '../../runtime/passwords';
import { startApi, testServices } from '../helpers/api';
import { testDb } from '../helpers/db';

const PASSWORD = 'the owner’s own password';
const ipv4 = () => `198.18.${crypto.randomInt(256)}.${1 + crypto.randomInt(254)}`;
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** A browser behind the trusted proxy: its cookies and the address the proxy reports for it. */
class Browser {
  readonly jar = new Map<string, string>();
  constructor(
    private readonly root: string,
    public address: string,
  ) {}
  private cookie = () => [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  private keep(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      if (pair.slice(i + 1) === '') this.jar.delete(pair.slice(0, i));
      else this.jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
  }
  async get(path: string): Promise<{ status: number; text: string }> {
    const res = await fetch(this.root + path, {
      headers: { cookie: this.cookie(), 'x-forwarded-for': this.address },
      redirect: 'manual',
    });
    this.keep(res);
    return { status: res.status, text: await res.text() };
  }
  async login(email: string, password: string): Promise<Response> {
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await this.get('/login')).text)![1];
    const res = await fetch(`${this.root}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookie(),
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': this.address,
      },
      body: new URLSearchParams({ _csrf: csrf, email, password }),
    });
    this.keep(res);
    await res.text();
    return res;
  }
  forgetSession(): void {
    this.jar.delete('dash_session');
  }
}

/**
 * Issue 42, item 7: distributed password guessing at one account. The account-wide allowance is
 * 20 wrong passwords per 15 minutes from every browser without the account's device cookie, with
 * a growing back-off; the owner is told at their next log-in.
 */
describe('one account guessed from many addresses (issue 42, item 7)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let root: string;
  beforeAll(async () => {
    const base = testServices().config;
    api = await startApi({ config: { ...base, trustedProxies: ['127.0.0.1', '::1'] } });
    root = api.dashboardRoot;
  });
  afterAll(async () => api?.close());

  async function owner() {
    const email = `owner-${crypto.randomBytes(4).toString('hex')}@example.test`;
    const user = await signUpUser(testDb(), { email, passwordHash: await hashPassword(PASSWORD) });
    return { email, user };
  }
  const wrongChecked = (userId: string) =>
    testDb()('audit_entries').where({ actor_id: userId, action: 'account.log_in', outcome: 'invalid_credentials' });
  /** Time passing: the account's current window is moved into the past by its own length. */
  const windowEnds = (email: string) =>
    testDb()('dashboard_login_attempts')
      .where({ key: `email:${sha256(email)}` })
      .update({ window_started_at: testDb().raw('window_started_at - make_interval(secs => window_seconds)') });

  it('the probe: 30 wrong passwords from 12 addresses, at most 20 checked, the rest refused unchecked; the owner’s browser still gets in and is told', async () => {
    const { email, user } = await owner();
    // The owner's laptop logged in before and holds the account's device cookie.
    const laptop = new Browser(root, ipv4());
    expect((await laptop.login(email, PASSWORD)).status).toBe(302);
    expect(laptop.jar.get(DEVICE_COOKIE)).toMatch(/^d1\./);
    laptop.forgetSession();

    const addresses = Array.from({ length: 12 }, () => new Browser(root, ipv4()));
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await addresses[i % 12].login(email, `guess ${i}`)).status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual(Array(10).fill(429));
    // Only the checked ones ran the password hash: each check leaves its audit row, a refusal none.
    expect(await wrongChecked(user.id)).toHaveLength(20);

    // A browser that never logged in to the account waits, even with the right password.
    const stranger = await new Browser(root, ipv4()).login(email, PASSWORD);
    expect(stranger.status).toBe(429);
    const wait = Number(stranger.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(15 * 60);

    // The owner's laptop is exempt, from any address, and its overview tells what happened.
    laptop.address = ipv4();
    const back = await laptop.login(email, PASSWORD);
    expect([back.status, back.headers.get('location')]).toEqual([302, '/overview']);
    const overview = await laptop.get('/overview');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('20 failed sign-in attempts since your last login, from 12 addresses.');
    // Stored with the session: it is still there on the next visit.
    expect((await laptop.get('/overview')).text).toContain('20 failed sign-in attempts since your last login');
    // Told once: the log-in after that has nothing new to tell.
    laptop.forgetSession();
    expect((await laptop.login(email, PASSWORD)).status).toBe(302);
    expect((await laptop.get('/overview')).text).not.toContain('failed sign-in attempt');
  });

  it('the back-off grows: each window after a full allowance is twice as long (15 min, 30 min, 1 h, …)', async () => {
    const { email, user } = await owner();
    const guessRound = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < DEFAULT_LIMITS.account.max + 1; i++)
        statuses.push((await new Browser(root, ipv4()).login(email, 'guess')).status);
      return statuses;
    };
    const refusedFor = async () =>
      Number((await new Browser(root, ipv4()).login(email, 'guess')).headers.get('retry-after'));

    expect(await guessRound()).toEqual([...Array(20).fill(401), 429]);
    expect(await refusedFor()).toBeLessThanOrEqual(15 * 60);
    await windowEnds(email);
    expect(await guessRound()).toEqual([...Array(20).fill(401), 429]);
    const second = await refusedFor();
    expect(second).toBeGreaterThan(15 * 60);
    expect(second).toBeLessThanOrEqual(30 * 60);
    await windowEnds(email);
    expect(await guessRound()).toEqual([...Array(20).fill(401), 429]);
    const third = await refusedFor();
    expect(third).toBeGreaterThan(30 * 60);
    expect(third).toBeLessThanOrEqual(60 * 60);
    expect(await wrongChecked(user.id)).toHaveLength(60);

    // The right password from a new browser, once the window ends, ends the streak: back to 15 minutes.
    await windowEnds(email);
    expect((await new Browser(root, ipv4()).login(email, PASSWORD)).status).toBe(302);
    expect(await guessRound()).toEqual([...Array(20).fill(401), 429]);
    expect(await refusedFor()).toBeLessThanOrEqual(15 * 60);
  });
});
