import crypto from 'node:crypto';
import Router from '@koa/router';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { z } from 'zod';
import type { Services } from '../services';
import { createSession, deleteSession, EmailTaken, findUserForLogin, signUpUser } from '../../db/dashboard-users';
import { clearAttempts, releaseAttempt, reserveAttempt, type AttemptKey } from '../../db/login-attempts';
import { recordUserAudit } from '../../db/audit';
import { readForm } from './form';
import { html } from './html';
import { csrfField, page } from './layout';
import { cookieOptions, SESSION_COOKIE } from './session';

export const MIN_PASSWORD_LENGTH = 12;

/** argon2id with the library's defaults (OWASP's m=19 MiB, t=2, p=1). */
export const hashPassword = (password: string) => // Algorithm is an ambient const enum (unusable under isolatedModules); 2 is its Argon2id.
  hash(password, { algorithm: 2 as Algorithm.Argon2id });

// Verifying against this when the email is unknown keeps the timing of "no such user" and "wrong password" alike.
const DUMMY_HASH = hashPassword(crypto.randomBytes(16).toString('hex'));

const credentials = z.object({
  email: z.email('Enter an email address like name@example.com.').max(254).transform((e) => e.toLowerCase()),
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

/** Most specific first: an attacker's own pair refuses them before they touch the account's shared ceiling. */
function loginKeys(email: string, ip: string): AttemptKey[] {
  return [
    { kind: 'pair', key: `pair:${sha256(`${email}\n${ip}`)}` },
    { kind: 'ip', key: `ip:${sha256(ip)}` },
    { kind: 'account', key: `email:${sha256(email)}` },
  ];
}

const signupKey = (ip: string): AttemptKey => ({ kind: 'signup', key: `signup:${sha256(ip)}` });

/** Shown after every accepted sign-up form, whether or not the email already had an account. */
export const SIGNED_UP_NOTICE = 'Sign-up received. Log in with the email and password you chose. If that email already had an account, nothing was changed: log in with its password.';

export function authPages(services: Services): Router {
  const { db } = services;
  const r = new Router();

  r.get('/signup', (ctx) => {
    if (ctx.state.user) return ctx.redirect('/overview');
    ctx.type = 'html';
    ctx.body = page({ title: 'Sign up', csrf: ctx.state.csrf!, body: credentialsForm('signup', ctx.state.csrf!) });
  });

  r.post('/signup', async (ctx) => {
    const form = await readForm(ctx);
    const parsed = credentials
      .extend({ password: z.string().min(MIN_PASSWORD_LENGTH, `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`).max(1024) })
      .safeParse({ email: form.get('email') ?? '', password: form.get('password') ?? '' });
    const fail = (status: number, error: string) => {
      ctx.status = status;
      ctx.type = 'html';
      ctx.body = page({ title: 'Sign up', csrf: ctx.state.csrf!, error, body: credentialsForm('signup', ctx.state.csrf!, form.get('email') ?? '') });
    };
    if (!parsed.success) return fail(400, parsed.error.issues[0].message);
    const reserved = await reserveAttempt(db, services.config.dashboardLimits, [signupKey(ctx.ip)]);
    if (!reserved.ok) {
      ctx.set('Retry-After', String(reserved.retryAfter));
      return fail(429, `Too many sign-ups from your network. Try again in ${Math.ceil(reserved.retryAfter / 60)} minute(s).`);
    }
    // Hashed either way, so a taken email answers in the same time as a free one.
    const passwordHash = await hashPassword(parsed.data.password);
    try {
      const user = await signUpUser(db, { email: parsed.data.email, passwordHash });
      await recordUserAudit(db, { tenantId: user.tenant_id, userId: user.id, action: 'dashboard.sign_up', requestId: ctx.state.requestId, outcome: 'ok' });
    } catch (err) {
      // A taken email gets the very answer a new one gets and nothing is written: sign-up must
      // not tell a stranger which emails have accounts (the login form does not either).
      if (!(err instanceof EmailTaken)) throw err;
    }
    // Not signed in straight away: that would differ between a new and a taken email.
    ctx.status = 303;
    ctx.redirect('/login?signed_up=1');
  });

  r.get('/login', (ctx) => {
    if (ctx.state.user) return ctx.redirect('/overview');
    ctx.type = 'html';
    const next = typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined;
    const notice = ctx.query.signed_up === '1' ? SIGNED_UP_NOTICE : undefined;
    ctx.body = page({ title: 'Log in', csrf: ctx.state.csrf!, notice, body: credentialsForm('login', ctx.state.csrf!, '', next) });
  });

  r.post('/login', async (ctx) => {
    const form = await readForm(ctx);
    const email = (form.get('email') ?? '').trim().toLowerCase();
    const fail = (status: number, error: string) => {
      ctx.status = status;
      ctx.type = 'html';
      const next = typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined;
      ctx.body = page({ title: 'Log in', csrf: ctx.state.csrf!, error, body: credentialsForm('login', ctx.state.csrf!, email, next) });
    };
    const parsed = credentials.safeParse({ email, password: form.get('password') ?? '' });
    if (!parsed.success) return fail(400, parsed.error.issues[0].message);
    // The attempt is taken from every allowance before the password is checked: checking
    // first and counting after let concurrent guesses all through.
    const keys = loginKeys(parsed.data.email, ctx.ip);
    const reserved = await reserveAttempt(db, services.config.dashboardLimits, keys);
    if (!reserved.ok) {
      ctx.set('Retry-After', String(reserved.retryAfter));
      return fail(429, `Too many failed attempts. Try again in ${Math.ceil(reserved.retryAfter / 60)} minute(s).`);
    }
    const user = await findUserForLogin(db, parsed.data.email);
    const ok = await verify(user?.password_hash ?? (await DUMMY_HASH), parsed.data.password);
    if (!user || !ok) {
      // The reservation stays: it is the failure's count.
      if (user) await recordUserAudit(db, { tenantId: user.tenant_id, userId: user.id, action: 'dashboard.log_in', requestId: ctx.state.requestId, outcome: 'invalid_credentials' });
      return fail(401, 'That email and password do not match an account.');
    }
    await clearAttempts(db, keys[0]);
    await releaseAttempt(db, keys.slice(1));
    const s = await createSession(db, user);
    await recordUserAudit(db, { tenantId: user.tenant_id, userId: user.id, action: 'dashboard.log_in', requestId: ctx.state.requestId, outcome: 'ok' });
    ctx.cookies.set(SESSION_COOKIE, s.token, cookieOptions(ctx, s.expiresAt));
    ctx.redirect(safeNext(ctx.query.next));
  });

  r.post('/logout', async (ctx) => {
    await readForm(ctx);
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (token) await deleteSession(db, token);
    const user = ctx.state.user;
    if (user) await recordUserAudit(db, { tenantId: user.tenant_id, userId: user.id, action: 'dashboard.log_out', requestId: ctx.state.requestId, outcome: 'ok' });
    ctx.cookies.set(SESSION_COOKIE, '', cookieOptions(ctx, new Date(0)));
    ctx.redirect('/');
  });

  return r;
}
