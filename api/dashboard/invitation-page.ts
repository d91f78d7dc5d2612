import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import { z } from 'zod';
import type { Services } from '../../operations/services';
import { createSession, deleteSession } from '../../db/dashboard-users';
import { acceptInvitation, findLiveInvitation, InvitationEmailTaken, invitationTenant } from '../../db/team';
import { withTenant } from '../../db/tenant-tx';
import { recordUserAudit } from '../../db/audit';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../../runtime/passwords';
import { readForm } from './form';
import { html } from './html';
import { csrfField, page } from './layout';
import { cookieOptions, SESSION_COOKIE } from './session';

const DEAD_LINK =
  'This invitation link has expired, was withdrawn or was already used. Ask whoever invited you for a new one.';

const password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`)
  .max(1024, 'Passwords are at most 1024 characters.');

/** A token as the link carries it; anything else is not looked up at all. */
const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

/**
 * Accepting an invitation (docs/team.md): the link's holder chooses a password and becomes a
 * member with the invitation's role, signed in. Like sign-up, a session mechanic rather than an
 * operation: before it there is no person to run one as. Audited as `team.accept`, the new
 * member as actor.
 */
export function invitationPages(services: Services): Router {
  const { db } = services;
  const r = exactRouter();

  const show = (ctx: Koa.Context, status: number, body: ReturnType<typeof html>, error?: string) => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    // The token is in the path: no referrer should carry it to a page linked from here.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.body = page({ title: 'Join the team', user: ctx.state.user, csrf: ctx.state.csrf!, error, body });
  };
  const dead = (ctx: Koa.Context) =>
    show(ctx, 410, html`<p><a href="/login">Log in</a> if you already joined.</p>`, DEAD_LINK);

  /** The live invitation behind a token, read without using it. */
  const lookUp = async (token: string) => {
    if (!TOKEN.test(token)) return undefined;
    const tenantId = await invitationTenant(db, token);
    if (!tenantId) return undefined;
    const inv = await withTenant(db, tenantId, (trx) => findLiveInvitation(trx, token));
    return inv && { ...inv, tenantId };
  };

  const form = (ctx: Koa.Context, inv: { email: string; role: string }) =>
    html`<p>You are invited to join as <strong>${inv.role}</strong> with the email <strong>${inv.email}</strong>.</p>
<form method="post" action="${ctx.path}">${csrfField(ctx.state.csrf!)}
<label for="password">Choose a password</label>
<input id="password" name="password" type="password" required autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-hint">
<p id="password-hint">At least ${MIN_PASSWORD_LENGTH} characters.</p>
<button type="submit">Join the team</button>
</form>`;

  r.get('/invitations/:token', async (ctx) => {
    const inv = await lookUp(ctx.params.token);
    if (!inv) return dead(ctx);
    show(ctx, 200, form(ctx, inv));
  });

  r.post('/invitations/:token', async (ctx) => {
    const fields = await readForm(ctx);
    const token = ctx.params.token;
    const inv = await lookUp(token);
    if (!inv) return dead(ctx);
    const parsed = password.safeParse(fields.get('password') ?? '');
    if (!parsed.success) return show(ctx, 400, form(ctx, inv), parsed.error.issues[0].message);
    const passwordHash = await hashPassword(parsed.data);
    let user;
    try {
      // The update that marks it used is the check: of two tabs submitting at once, one joins.
      user = await withTenant(db, inv.tenantId, (trx) => acceptInvitation(trx, inv.tenantId, token, passwordHash));
    } catch (err) {
      if (!(err instanceof InvitationEmailTaken)) throw err;
      return show(
        ctx,
        409,
        html`<p><a href="/login">Log in</a></p>`,
        'This email already has an account of its own, and one login belongs to one account. Ask to be invited with another email address.',
      );
    }
    if (!user) return dead(ctx);
    await recordUserAudit(db, {
      tenantId: user.tenant_id,
      userId: user.id,
      action: 'team.accept',
      requestId: ctx.state.requestId,
      outcome: 'ok',
      detail: { id: inv.id, role: user.role },
    });
    const previous = ctx.cookies.get(SESSION_COOKIE);
    if (previous) await deleteSession(db, previous);
    const s = await createSession(db, user);
    ctx.cookies.set(SESSION_COOKIE, s.token, cookieOptions(ctx, s.expiresAt));
    ctx.status = 303;
    ctx.redirect('/overview');
  });

  return r;
}
