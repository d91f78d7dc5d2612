import type Koa from 'koa';
import type { EmulatorStore } from '../common/types';
import { badRequest, RzpError } from './errors';
import { readBody, route, type Route } from './http';
import { nowSec, randomToken } from './ids';
import { ensureAccount, findAccount, safeEqual, type AccountRecord, type Mode } from './state';

/**
 * Razorpay partner OAuth (https://razorpay.com/docs/partners/technology-partners/onboard-businesses/integrate-oauth/):
 * GET /authorize shows the merchant a consent page and redirects to redirect_uri with
 * `code` and `state`; POST /token exchanges the code for {access_token, public_token,
 * refresh_token, razorpay_account_id, expires_in, token_type}. Razorpay serves these on
 * auth.razorpay.com; the emulator serves them under /oauth on its own port.
 *
 * Clients: a partner's client_id/client_secret is registered with POST
 * /__control/oauth_clients, or pinned by its first token exchange (so the dashboard can
 * use any configured pair against a fresh emulator); after that the secret must match.
 * The token's mode is the `mode` sent to /token (Razorpay's default is live); without it,
 * the emulator uses the mode the merchant picked on the consent page.
 */
const TOKEN_TTL = 7_862_400;

export function ensureOAuthClient(store: EmulatorStore, body: { client_id?: unknown; client_secret?: unknown }) {
  const id = typeof body.client_id === 'string' && body.client_id ? body.client_id : randomToken(14);
  if (!/^[A-Za-z0-9]{1,14}$/.test(id)) throw badRequest('client_id is not a valid ID', 'client_id');
  const existing = store.find('oauth_clients', (c) => c.client_id === id);
  if (existing) return { client_id: existing.client_id, client_secret: existing.client_secret };
  const rec = {
    client_id: id,
    client_secret: typeof body.client_secret === 'string' && body.client_secret ? body.client_secret : randomToken(32),
    created_at: nowSec(),
  };
  store.insert('oauth_clients', rec);
  return { client_id: rec.client_id, client_secret: rec.client_secret };
}

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function consentPage(store: EmulatorStore, q: Record<string, string>): string {
  const accounts = store.list('accounts') as AccountRecord[];
  const options = accounts
    .map((a, i) => `<option value="${esc(a.account)}"${i === 0 ? ' selected' : ''}>${esc(a.account)}</option>`)
    .join('');
  const hidden = ['client_id', 'redirect_uri', 'state', 'scope']
    .map((k) => `<input type="hidden" name="${k}" value="${esc(q[k])}">`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Connect to Razorpay (emulator)</title></head>
<body><main>
<h1>Connect your Razorpay account</h1>
<p>An application (client <code>${esc(q.client_id)}</code>) asks for <strong>${esc(q.scope || 'read_write')}</strong> access to your account.</p>
<form method="post" action="/oauth/authorize">${hidden}
<label>Account <select name="account">${options}<option value="new"${accounts.length ? '' : ' selected'}>Create a new account</option></select></label>
<fieldset><legend>Mode</legend>
<label><input type="radio" name="mode" value="test" checked> Test</label>
<label><input type="radio" name="mode" value="live"> Live</label></fieldset>
<button type="submit" name="decision" value="allow">Connect</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form></main></body></html>`;
}

function scopeOf(q: Record<string, unknown>): string {
  const s = q.scope ?? q['scope[]'];
  return Array.isArray(s) ? s.join(' ') : typeof s === 'string' ? s : 'read_write';
}

function redirectWith(uri: string, params: Record<string, string>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v) u.searchParams.set(k, v);
  return u.toString();
}

function validRedirect(uri: unknown): uri is string {
  if (typeof uri !== 'string') return false;
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function issueTokens(store: EmulatorStore, account: string, mode: Mode, clientId: string) {
  const rec = {
    access_token: `rzp_emu_at_${randomToken(40)}`,
    refresh_token: `rzp_emu_rt_${randomToken(40)}`,
    public_token: `rzp_${mode}_oauth_${randomToken(14)}`,
    account,
    mode,
    client_id: clientId,
    expires_at: nowSec() + TOKEN_TTL,
    revoked: false,
  };
  store.insert('oauth_tokens', rec);
  return {
    public_token: rec.public_token,
    token_type: 'Bearer',
    expires_in: TOKEN_TTL,
    access_token: rec.access_token,
    refresh_token: rec.refresh_token,
    razorpay_account_id: account,
  };
}

export function oauthRoutes(store: EmulatorStore): Route[] {
  const checkClient = (body: Record<string, unknown>) => {
    if (
      typeof body.client_id !== 'string' ||
      typeof body.client_secret !== 'string' ||
      !body.client_id ||
      !body.client_secret
    ) {
      throw new RzpError(400, 'client_id and client_secret are required', { field: 'client_id' });
    }
    const known = store.find('oauth_clients', (c) => c.client_id === body.client_id);
    if (!known) return ensureOAuthClient(store, body);
    if (!safeEqual(String(known.client_secret), body.client_secret))
      throw new RzpError(401, 'Invalid client credentials', { field: 'client_secret' });
    return known;
  };
  return [
    route('GET', '/oauth/authorize', (ctx: Koa.Context) => {
      const q = ctx.query as Record<string, string>;
      if (!q.client_id) throw badRequest('client_id is required', 'client_id');
      if (q.response_type !== 'code') throw badRequest('response_type must be code', 'response_type');
      if (!validRedirect(q.redirect_uri)) throw badRequest('redirect_uri is not a valid URL', 'redirect_uri');
      if (!q.state) throw badRequest('state is required', 'state');
      ctx.type = 'text/html';
      return consentPage(store, { ...q, scope: scopeOf(ctx.query) });
    }),
    route('POST', '/oauth/authorize', async (ctx: Koa.Context) => {
      const body = await readBody(ctx);
      const redirect = body.redirect_uri;
      if (!validRedirect(redirect)) throw badRequest('redirect_uri is not a valid URL', 'redirect_uri');
      const state = typeof body.state === 'string' ? body.state : '';
      if (body.decision === 'deny') {
        ctx.redirect(
          redirectWith(redirect, {
            error: 'access_denied',
            error_description: 'The merchant denied the request',
            state,
          }),
        );
        return undefined;
      }
      if (typeof body.client_id !== 'string' || !body.client_id) throw badRequest('client_id is required', 'client_id');
      const wanted = typeof body.account === 'string' && body.account !== 'new' ? body.account : undefined;
      const account = wanted ? (findAccount(store, wanted) ?? ensureAccount(store, wanted)) : ensureAccount(store);
      const code = randomToken(40);
      store.insert('oauth_codes', {
        code,
        client_id: body.client_id,
        redirect_uri: redirect,
        account: account.account,
        mode: body.mode === 'live' ? 'live' : 'test',
        scope: scopeOf(body),
        expires_at: nowSec() + 600,
        used: false,
      });
      ctx.redirect(redirectWith(redirect, { code, state }));
      return undefined;
    }),
    route('POST', '/oauth/token', async (ctx: Koa.Context) => {
      const body = await readBody(ctx);
      const client = checkClient(body);
      if (body.grant_type === 'authorization_code') {
        const code = store.find('oauth_codes', (c) => c.code === body.code);
        if (!code || code.used || Number(code.expires_at) < nowSec() || code.client_id !== client.client_id) {
          throw badRequest('The authorization code is invalid or has expired', 'code');
        }
        if (body.redirect_uri !== undefined && body.redirect_uri !== code.redirect_uri)
          throw badRequest('redirect_uri does not match the authorization request', 'redirect_uri');
        code.used = true;
        store.save();
        const mode: Mode = body.mode === 'live' ? 'live' : body.mode === 'test' ? 'test' : (code.mode as Mode);
        return issueTokens(store, String(code.account), mode, String(client.client_id));
      }
      if (body.grant_type === 'refresh_token') {
        const old = store.find(
          'oauth_tokens',
          (t) => t.refresh_token === body.refresh_token && !t.revoked && t.client_id === client.client_id,
        );
        if (!old) throw badRequest('The refresh token is invalid', 'refresh_token');
        old.revoked = true;
        store.save();
        const { razorpay_account_id: _ignored, ...rest } = issueTokens(
          store,
          String(old.account),
          old.mode as Mode,
          String(client.client_id),
        );
        return rest;
      }
      throw badRequest('grant_type is not valid', 'grant_type');
    }),
    route('POST', '/oauth/revoke', async (ctx: Koa.Context) => {
      const body = await readBody(ctx);
      const client = checkClient(body);
      const field = body.token_type_hint === 'refresh_token' ? 'refresh_token' : 'access_token';
      const t = store.find('oauth_tokens', (x) => x[field] === body.token && x.client_id === client.client_id);
      if (t) {
        t.revoked = true;
        store.save();
      }
      return { message: 'Token Revoked' };
    }),
  ];
}
