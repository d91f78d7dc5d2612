import crypto from 'node:crypto';
import type Koa from 'koa';
import type { EmulatorStore } from '../common/types';
import { defaultAccount, ensureAccount, findAccount, type Mode } from './accounts';

/**
 * Paddle has no public OAuth. So the dashboard can connect it like the other web providers,
 * the emulator serves the same flow as Stripe Connect's: an authorize page with a Connect
 * form, a redirect back with `code` (and `state`), and a token exchange answering
 * { access_token: <the seller's API key for that mode>, token_type, account_id, livemode, scope }.
 * Errors on the token endpoint use RFC 6749's shape ({ error, error_description }).
 */

const CODE_TTL_MS = 5 * 60_000;

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function validRedirect(uri: string | null): uri is string {
  if (!uri) return false;
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

async function readForm(ctx: Koa.Context, raw: string): Promise<Record<string, string>> {
  const type = String(ctx.get('content-type'));
  if (type.includes('application/json')) {
    const parsed = raw ? JSON.parse(raw) : {};
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

function authorizePage(store: EmulatorStore, q: URLSearchParams): string {
  const mode = q.get('mode') === 'live' ? 'live' : 'test';
  const hidden = ['client_id', 'redirect_uri', 'state', 'scope']
    .map((k) => `<input type="hidden" name="${k}" value="${esc(q.get(k) ?? '')}">`)
    .join('\n      ');
  const prefill = defaultAccount(store)?.account ?? '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Connect your Paddle account</title></head>
<body>
  <main>
    <h1>Connect your Paddle account</h1>
    <p>An application wants to manage your Paddle catalogue and receive your notifications.</p>
    <form method="post" action="/oauth/authorize">
      ${hidden}
      <label>Seller ID <input name="account" value="${esc(prefill)}" placeholder="leave empty to create a new seller"></label>
      <label>Environment
        <select name="mode">
          <option value="test"${mode === 'test' ? ' selected' : ''}>Sandbox</option>
          <option value="live"${mode === 'live' ? ' selected' : ''}>Live</option>
        </select>
      </label>
      <button type="submit" name="decision" value="allow">Connect</button>
      <button type="submit" name="decision" value="deny">Cancel</button>
    </form>
  </main>
</body>
</html>`;
}

function redirectWith(ctx: Koa.Context, uri: string, params: Record<string, string>): void {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v) u.searchParams.set(k, v);
  ctx.redirect(u.toString());
}

function tokenError(ctx: Koa.Context, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.body = { error, error_description: description };
}

/** Serves /oauth/* ; returns false when the path is not an OAuth route. */
export async function handleOAuth(
  store: EmulatorStore,
  ctx: Koa.Context,
  rawBody: () => Promise<string>,
): Promise<boolean> {
  if (ctx.path === '/oauth/authorize' && ctx.method === 'GET') {
    const q = ctx.URL.searchParams;
    if (!q.get('client_id') || !validRedirect(q.get('redirect_uri'))) {
      ctx.status = 400;
      ctx.type = 'text/plain';
      ctx.body = 'client_id and an http(s) redirect_uri are required';
      return true;
    }
    ctx.type = 'text/html';
    ctx.body = authorizePage(store, q);
    return true;
  }
  if (ctx.path === '/oauth/authorize' && ctx.method === 'POST') {
    const form = await readForm(ctx, await rawBody());
    if (!form.client_id || !validRedirect(form.redirect_uri ?? null)) {
      ctx.status = 400;
      ctx.type = 'text/plain';
      ctx.body = 'client_id and an http(s) redirect_uri are required';
      return true;
    }
    if (form.decision === 'deny') {
      redirectWith(ctx, form.redirect_uri, {
        error: 'access_denied',
        error_description: 'The user denied your request',
        state: form.state ?? '',
      });
      return true;
    }
    const account = ensureAccount(store, form.account?.trim() || undefined);
    const code = `ac_${crypto.randomBytes(24).toString('base64url')}`;
    store.insert('oauth_codes', {
      code,
      client_id: form.client_id,
      redirect_uri: form.redirect_uri,
      account: account.account,
      mode: (form.mode === 'live' ? 'live' : 'test') satisfies Mode,
      expires_at: Date.now() + CODE_TTL_MS,
      used: false,
    });
    redirectWith(ctx, form.redirect_uri, { code, state: form.state ?? '' });
    return true;
  }
  if (ctx.path === '/oauth/token' && ctx.method === 'POST') {
    let form: Record<string, string>;
    try {
      form = await readForm(ctx, await rawBody());
    } catch {
      tokenError(ctx, 400, 'invalid_request', 'body must be form-encoded or JSON');
      return true;
    }
    // Client credentials in the body or as HTTP Basic, as RFC 6749 allows.
    const basic = /^basic\s+(.+)$/i.exec(ctx.get('authorization'));
    if (basic) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      form.client_id ??= decodeURIComponent(id ?? '');
      form.client_secret ??= decodeURIComponent(secret ?? '');
    }
    if (form.grant_type !== 'authorization_code') {
      tokenError(ctx, 400, 'unsupported_grant_type', 'grant_type must be authorization_code');
      return true;
    }
    if (!form.client_id || !form.client_secret) {
      tokenError(ctx, 401, 'invalid_client', 'client authentication failed');
      return true;
    }
    const grant = store.find('oauth_codes', (c) => c.code === form.code);
    if (!grant || grant.used || (grant.expires_at as number) < Date.now() || grant.client_id !== form.client_id) {
      tokenError(ctx, 400, 'invalid_grant', 'authorization code is invalid, expired or already used');
      return true;
    }
    if (form.redirect_uri && form.redirect_uri !== grant.redirect_uri) {
      tokenError(ctx, 400, 'invalid_grant', 'redirect_uri does not match the authorization request');
      return true;
    }
    grant.used = true;
    store.save();
    const account = findAccount(store, String(grant.account))!;
    const mode = grant.mode as Mode;
    ctx.body = {
      access_token: account.credentials[mode].api_key,
      token_type: 'bearer',
      account_id: account.account,
      livemode: mode === 'live',
      scope: 'read_write',
    };
    return true;
  }
  return false;
}
