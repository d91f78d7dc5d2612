import crypto from 'node:crypto';
import type Router from '@koa/router';
import { exactRouter } from '../router';
import { z } from 'zod';
import type { Services } from '../../operations/services';
import { createSession, deleteSession, EmailTaken, findUserForLogin, signUpUser } from '../../db/dashboard-users';
import { clearAttempts, releaseAttempt, reserveAttempt, type AttemptKey } from '../../db/login-attempts';
import { recordUserAudit } from '../../db/audit';
import { noteSignInFailure, takeSignInFailures } from '../../db/sign-in-failures';
import { withTenant } from '../../db/tenant-tx';
import { clientAddressKey } from '../../domain/client-address-key';
import type { AttemptKind } from '../../domain/login-limits';
import { dashboardAuthAttempts } from '../../runtime/metrics';
import { hashPassword, MIN_PASSWORD_LENGTH, passwordMatches } from '../../runtime/passwords';
import { DEVICE_COOKIE, deviceCookies, setDeviceCookie } from './device-cookie';
import { readForm } from './form';
import { html } from './html';
import { csrfField, page } from './layout';
import { cookieOptions, SESSION_COOKIE } from './session';

// Verifying against this when the email is unknown keeps the timing of "no such user" and "wrong password" alike.
const DUMMY_HASH = hashPassword(crypto.randomBytes(16).toString('hex'));

const credentials = z.object({
  email: z
    .email('Enter an email address like name@example.com.')
    .max(254)
    .transform((e) => e.toLowerCase()),
  password: z.string().min(1, 'Enter your password.').max(1024, 'Passwords are at most 1024 characters.'),
});

function credentialsForm(kind: 'signup' | 'login', csrf: string, email = '', next?: string) {
  const action = kind === 'signup' ? 'Sign up' : 'Log in';
  return html`<form method="post" action="/${kind}${next ? `?next=${encodeURIComponent(next)}` : ''}">
${csrfField(csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" required
  autocomplete="${kind === 'signup' ? 'new-password' : 'current-password'}" ${kind === 'signup' ? html`minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-hint"` : ''}>
${kind === 'signup' ? html`<p id="password-hint">At least ${MIN_PASSWORD_LENGTH} characters.</p>` : ''}
<button type="submit">${action}</button>
</form>
${kind === 'signup' ? html`<p>Already have an account? <a href="/login">Log in</a></p>` : html`<p>New here? <a href="/signup">Sign up</a></p>`}`;
}

/** Where to go after logging in: a local path only (never `//host` or a URL), else the overview. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[\w\-./?=&%]*$/.test(next) ? next : '/overview';
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/**
 * The allowances one log-in attempt spends. Addresses by their key (an IPv6 client's /64:
 * domain/client-address-key.ts). A browser holding a device cookie for the account (`device`,
 * its nonce) spends its own allowance only: it logged in here before, so neither the account's
 * shared ceiling nor its address's (which others behind the same address can fill) holds it
 * back. Anyone else: most specific first, so an attacker's own pair refuses them before they
 * touch the account's shared ceiling.
 */
export function loginKeys(email: string, ip: string, device: string | null): AttemptKey[] {
  if (device) return [{ kind: 'device', key: `device:${sha256(device)}` }];
  const addr = clientAddressKey(ip);
  return [
    { kind: 'pair', key: `pair:${sha256(`${email}\n${addr}`)}` },
    { kind: 'ip', key: `ip:${sha256(addr)}` },
    { kind: 'account', key: `email:${sha256(email)}` },
  ];
}

const signupKey = (ip: string): AttemptKey => ({ kind: 'signup', key: `signup:${sha256(clientAddressKey(ip))}` });

/** What each refusing allowance means, in the operator's log line. */
const REFUSED_BECAUSE: Record<AttemptKind, string> = {
  pair: 'wrong passwords for one account from one address',
  ip: 'wrong passwords from one address over many accounts (spraying)',
  account:
    'wrong passwords for one account from many addresses (its shared ceiling, with a growing back-off): browsers that never logged in to it wait; known devices do not',
  device: 'wrong passwords from a browser that has logged in to this account before',
  signup: 'sign-ups from one address',
};

/** One warning per allowance key a minute per process: a refusal loop must not flood the log. */
const lastWarned = new Map<string, number>();
function firstThisMinute(key: string): boolean {
  const now = Date.now();
  if ((lastWarned.get(key) ?? 0) > now - 60_000) return false;
  if (lastWarned.size >= 10_000) lastWarned.clear();
  lastWarned.set(key, now);
  return true;
}

/** Shown after every accepted invitation, whether or not its email already had an account (invitation-page.ts). */
const JOINED_NOTICE =
  'Invitation accepted: log in with the email of the invitation and the password you chose. If that email already had an account of its own, nothing was changed and it did not join: one login belongs to one account, so ask to be invited with another address.';

/** Shown after every accepted sign-up form, whether or not the email already had an account. */
export const SIGNED_UP_NOTICE =
  'Sign-up received. Log in with the email and password you chose. If that email already had an account, nothing was changed: log in with its password.';

/**
 * Sign-up, log-in and log-out are session mechanics, not operations: before them there is no
 * person (or no tenant) to run an operation as. Each writes through db/dashboard-users.ts; their
 * audit rows are named in the operations' vocabulary all the same (`account.sign_up`,
 * `account.log_in`, `account.log_out`), the person as actor.
 */
export function authPages(services: Services): Router {
  const { db } = services;
  const devices = deviceCookies(services.vault);
  const r = exactRouter();

  r.get('/signup', (ctx) => {
    if (ctx.state.user) return ctx.redirect('/overview');
    ctx.type = 'html';
    ctx.body = page({ title: 'Sign up', csrf: ctx.state.csrf!, body: credentialsForm('signup', ctx.state.csrf!) });
  });

  r.post('/signup', async (ctx) => {
    const form = await readForm(ctx);
    const parsed = credentials
      .extend({
        password: z
          .string()
          .min(MIN_PASSWORD_LENGTH, `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`)
          .max(1024),
      })
      .safeParse({ email: form.get('email') ?? '', password: form.get('password') ?? '' });
    const fail = (status: number, error: string) => {
      ctx.status = status;
      ctx.type = 'html';
      ctx.body = page({
        title: 'Sign up',
        csrf: ctx.state.csrf!,
        error,
        body: credentialsForm('signup', ctx.state.csrf!, form.get('email') ?? ''),
      });
    };
    if (!parsed.success) return fail(400, parsed.error.issues[0].message);
    const reserved = await reserveAttempt(db, services.config.dashboardLimits, [signupKey(ctx.ip)]);
    if (!reserved.ok) {
      dashboardAuthAttempts.inc({ form: 'signup', outcome: 'refused', limit: 'signup', device: 'none' });
      if (firstThisMinute(signupKey(ctx.ip).key)) {
        ctx.state.log.warn(
          { limit: 'signup', address_key: clientAddressKey(ctx.ip), retry_after_s: reserved.retryAfter },
          `dashboard sign-up refused: ${REFUSED_BECAUSE.signup}`,
        );
      }
      ctx.set('Retry-After', String(reserved.retryAfter));
      return fail(
        429,
        `Too many sign-ups from your network. Try again in ${Math.ceil(reserved.retryAfter / 60)} minute(s).`,
      );
    }
    // Hashed either way, so a taken email answers in the same time as a free one.
    const passwordHash = await hashPassword(parsed.data.password);
    try {
      const user = await signUpUser(db, { email: parsed.data.email, passwordHash });
      await recordUserAudit(db, {
        tenantId: user.tenant_id,
        userId: user.id,
        action: 'account.sign_up',
        requestId: ctx.state.requestId,
        outcome: 'ok',
      });
    } catch (err) {
      // A taken email gets the very answer a new one gets and nothing is written: sign-up must
      // not tell a stranger which emails have accounts (the login form does not either).
      if (!(err instanceof EmailTaken)) throw err;
    }
    dashboardAuthAttempts.inc({ form: 'signup', outcome: 'ok', limit: 'none', device: 'none' });
    // Not signed in straight away: that would differ between a new and a taken email.
    ctx.status = 303;
    ctx.redirect('/login?signed_up=1');
  });

  r.get('/login', (ctx) => {
    if (ctx.state.user) return ctx.redirect('/overview');
    ctx.type = 'html';
    const next = typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined;
    const notice =
      ctx.query.signed_up === '1' ? SIGNED_UP_NOTICE : ctx.query.joined === '1' ? JOINED_NOTICE : undefined;
    ctx.body = page({
      title: 'Log in',
      csrf: ctx.state.csrf!,
      notice,
      body: credentialsForm('login', ctx.state.csrf!, '', next),
    });
  });

  r.post('/login', async (ctx) => {
    const form = await readForm(ctx);
    const email = (form.get('email') ?? '').trim().toLowerCase();
    const fail = (status: number, error: string) => {
      ctx.status = status;
      ctx.type = 'html';
      const next = typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined;
      ctx.body = page({
        title: 'Log in',
        csrf: ctx.state.csrf!,
        error,
        body: credentialsForm('login', ctx.state.csrf!, email, next),
      });
    };
    const parsed = credentials.safeParse({ email, password: form.get('password') ?? '' });
    if (!parsed.success) return fail(400, parsed.error.issues[0].message);
    // The attempt is taken from every allowance before the password is checked: checking
    // first and counting after let concurrent guesses all through.
    const device = devices?.check(ctx.cookies.get(DEVICE_COOKIE), parsed.data.email) ?? null;
    const deviceLabel = device ? 'known' : 'none';
    const keys = loginKeys(parsed.data.email, ctx.ip, device);
    const reserved = await reserveAttempt(db, services.config.dashboardLimits, keys);
    if (!reserved.ok) {
      dashboardAuthAttempts.inc({ form: 'login', outcome: 'refused', limit: reserved.kind, device: deviceLabel });
      const refusedKey = keys.find((k) => k.kind === reserved.kind)!.key;
      if (firstThisMinute(refusedKey)) {
        // Ids only (never the email): which account, from where, and which allowance. Looked up
        // after the answer, not awaited, so a refusal takes as long for an unknown email.
        const log = ctx.state.log;
        const fields = {
          limit: reserved.kind,
          address_key: clientAddressKey(ctx.ip),
          retry_after_s: reserved.retryAfter,
        };
        const message = `dashboard log-in refused: ${REFUSED_BECAUSE[reserved.kind]}`;
        void (reserved.kind === 'ip' ? Promise.resolve(undefined) : findUserForLogin(db, parsed.data.email))
          .then((target) => log.warn({ ...fields, user_id: target?.id, tenant_id: target?.tenant_id }, message))
          .catch(() => log.warn(fields, message));
      }
      ctx.set('Retry-After', String(reserved.retryAfter));
      return fail(429, `Too many failed attempts. Try again in ${Math.ceil(reserved.retryAfter / 60)} minute(s).`);
    }
    const user = await findUserForLogin(db, parsed.data.email);
    const ok = await passwordMatches(user?.password_hash ?? (await DUMMY_HASH), parsed.data.password);
    if (!user || !ok) {
      // The reservation stays: it is the failure's count.
      dashboardAuthAttempts.inc({ form: 'login', outcome: 'invalid_credentials', limit: 'none', device: deviceLabel });
      if (user) {
        await recordUserAudit(db, {
          tenantId: user.tenant_id,
          userId: user.id,
          action: 'account.log_in',
          requestId: ctx.state.requestId,
          outcome: 'invalid_credentials',
        });
        // Told to the member at their next log-in (no mail is sent): how many, from how many addresses.
        const addressKeyHash = sha256(clientAddressKey(ctx.ip));
        await withTenant(db, user.tenant_id, (trx) => noteSignInFailure(trx, user.tenant_id, user.id, addressKeyHash));
      }
      return fail(401, 'That email and password do not match an account.');
    }
    await clearAttempts(db, keys[0]);
    await releaseAttempt(db, keys.slice(1), { correct: true });
    const s = await withTenant(db, user.tenant_id, async (trx) =>
      createSession(trx, user, await takeSignInFailures(trx, user.id)),
    );
    await recordUserAudit(db, {
      tenantId: user.tenant_id,
      userId: user.id,
      action: 'account.log_in',
      requestId: ctx.state.requestId,
      outcome: 'ok',
    });
    dashboardAuthAttempts.inc({ form: 'login', outcome: 'ok', limit: 'none', device: deviceLabel });
    ctx.cookies.set(SESSION_COOKIE, s.token, cookieOptions(ctx, s.expiresAt));
    setDeviceCookie(ctx, devices, parsed.data.email);
    ctx.redirect(safeNext(ctx.query.next));
  });

  r.post('/logout', async (ctx) => {
    await readForm(ctx);
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (token) await deleteSession(db, token);
    const user = ctx.state.user;
    if (user)
      await recordUserAudit(db, {
        tenantId: user.tenant_id,
        userId: user.id,
        action: 'account.log_out',
        requestId: ctx.state.requestId,
        outcome: 'ok',
      });
    ctx.cookies.set(SESSION_COOKIE, '', cookieOptions(ctx, new Date(0)));
    ctx.redirect('/');
  });

  return r;
}
