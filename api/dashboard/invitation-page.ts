import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import { z } from 'zod';
import type { Services } from '../../operations/services';
import { deleteSession } from '../../db/dashboard-users';
import { reserveAttempt } from '../../db/login-attempts';
import { acceptInvitation, findLiveInvitation, invitationTenant, InviterMayNotGiveRole } from '../../db/team';
import { withTenant } from '../../db/tenant-tx';
import { recordUserAudit } from '../../db/audit';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../../runtime/passwords';
import { loginKeys } from './auth-pages';
import { readForm } from './form';
import { html } from './html';
import { csrfField, page } from './layout';
import { cookieOptions, SESSION_COOKIE } from './session';

const DEAD_LINK =
  'This invitation link has expired, was withdrawn or was already used. Ask whoever invited you for a new one.';

const INVITER_LOST_RIGHTS =
  'This invitation can no longer be used: whoever made this invitation may no longer give this role. Ask an owner or an admin of the team for a new one.';

const password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`)
  .max(1024, 'Passwords are at most 1024 characters.');

/** A token as the link carries it; anything else is not looked up at all. */
const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

/**
 * Accepting an invitation (docs/team.md): the link's holder chooses a password and becomes a
 * member with the invitation's role, then logs in. Like sign-up, a session mechanic rather than
 * an operation: before it there is no person to run one as. Audited as `team.accept`, the new
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
  // The inviter was removed or demoted since (docs/team.md): nothing is written.
  const inviterLostRights = (ctx: Koa.Context) => show(ctx, 403, html``, INVITER_LOST_RIGHTS);

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
    if (!inv.inviterMayGive) return inviterLostRights(ctx);
    show(ctx, 200, form(ctx, inv));
  });

  r.post('/invitations/:token', async (ctx) => {
    const fields = await readForm(ctx);
    const token = ctx.params.token;
    const inv = await lookUp(token);
    if (!inv) return dead(ctx);
    if (!inv.inviterMayGive) return inviterLostRights(ctx);
    const parsed = password.safeParse(fields.get('password') ?? '');
    if (!parsed.success) return show(ctx, 400, form(ctx, inv), parsed.error.issues[0].message);
    // A log-in attempt for the invited address, from this client address, taken before the
    // password is hashed and kept whatever follows: minting invitations cannot buy unlimited hashes.
    const reserved = await reserveAttempt(db, services.config.dashboardLimits, loginKeys(inv.email, ctx.ip, null));
    if (!reserved.ok) {
      ctx.set('Retry-After', String(reserved.retryAfter));
      return show(
        ctx,
        429,
        form(ctx, inv),
        `Too many attempts. Try again in ${Math.ceil(reserved.retryAfter / 60)} minute(s).`,
      );
    }
    const passwordHash = await hashPassword(parsed.data);
    // The update that marks it used is the check: of two tabs submitting at once, one joins.
    let outcome;
    try {
      outcome = await withTenant(db, inv.tenantId, (trx) => acceptInvitation(trx, inv.tenantId, token, passwordHash));
    } catch (err) {
      if (err instanceof InviterMayNotGiveRole) return inviterLostRights(ctx);
      throw err;
    }
    if (!outcome) return dead(ctx);
    if (outcome !== 'email_taken')
      await recordUserAudit(db, {
        tenantId: outcome.tenant_id,
        userId: outcome.id,
        action: 'team.accept',
        requestId: ctx.state.requestId,
        outcome: 'ok',
        detail: { id: inv.id, role: outcome.role },
      });
    // One answer whether or not the email already had an account (docs/team.md): signed out, to
    // the log-in page with the same notice. Signing the new member in here would tell the two apart.
    const previous = ctx.cookies.get(SESSION_COOKIE);
    if (previous) {
      await deleteSession(db, previous);
      ctx.cookies.set(SESSION_COOKIE, '', cookieOptions(ctx, new Date(0)));
    }
    ctx.status = 303;
    ctx.redirect('/login?joined=1');
  });

  return r;
}
