import type Koa from 'koa';
import type { Accounts, AccountRecord } from './accounts';
import { maskKey } from './accounts';
import { readRaw, sendJson } from './api';
import { parseForm, type FormObject } from './form';
import { newId, nowSeconds, randomBase62 } from './ids';
import type { Repo, StripeObject } from './repo';

const CODE_TTL_S = 300;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function withParams(uri: string, params: Record<string, string>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

function page(title: string, inner: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;color:#1a1f36}button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}label{display:block;margin:1rem 0}</style>
</head><body>${inner}</body></html>`;
}

/** The Connect token response Stripe returns from POST /oauth/token. */
function tokenResponse(account: AccountRecord, livemode: boolean, scope: string) {
  const mode = livemode ? 'live' : 'test';
  const refresh = (account._refresh_tokens ??= {});
  refresh[mode] ??= `rt_${randomBase62(48)}`;
  return {
    access_token: account._credentials[mode].secret_key,
    livemode,
    refresh_token: refresh[mode],
    token_type: 'bearer',
    stripe_publishable_key: account._publishable[mode],
    stripe_user_id: account.id,
    scope,
  };
}

/**
 * Stripe Connect OAuth on the emulator's own port (it doubles as connect.stripe.com):
 * GET /oauth/authorize serves the consent page, its form POSTs back and redirects to
 * redirect_uri with `code` and `state`; POST /oauth/token exchanges the code (platform
 * secret key as Bearer or `client_secret`) for a newly created connected account.
 */
export function createOAuthMiddleware({ repo, accounts }: { repo: Repo; accounts: Accounts }): Koa.Middleware {
  const oauthError = (ctx: Koa.Context, status: number, error: string, description: string) =>
    sendJson(ctx, status, { error, error_description: description });

  const authorizePage = (ctx: Koa.Context, q: FormObject) => {
    const get = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : '');
    const clientId = get('client_id');
    // An unknown but well-formed client id registers its platform (its key pins at the token exchange).
    const platform = clientId
      ? (accounts.byClientId(clientId) ??
        (/^ca_[A-Za-z0-9]+$/.test(clientId) ? accounts.ensurePlatform(clientId) : undefined))
      : undefined;
    const redirectUri = get('redirect_uri');
    const problems: string[] = [];
    if (get('response_type') !== 'code') problems.push('response_type must be "code".');
    if (!platform) problems.push(`No such application: '${clientId}'.`);
    if (!/^https?:\/\//.test(redirectUri)) problems.push('redirect_uri must be an absolute http(s) URL.');
    const scope = get('scope') || 'read_write';
    if (!['read_write', 'read_only'].includes(scope)) problems.push('scope must be read_write or read_only.');
    ctx.type = 'text/html';
    if (problems.length) {
      ctx.status = 400;
      ctx.body = page(
        'Stripe Connect error',
        `<h1>Invalid request</h1><ul>${problems.map((p) => `<li>${esc(p)}</li>`).join('')}</ul>`,
      );
      return;
    }
    const hidden = {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope,
      state: get('state'),
    };
    ctx.body = page(
      'Connect with Stripe',
      `<h1>Connect your Stripe account</h1>
<p><strong>${esc(String((platform!.settings as { dashboard?: { display_name?: string } })?.dashboard?.display_name ?? platform!.id))}</strong> would like to connect to your account (${esc(scope)}).</p>
<form method="post" action="/oauth/authorize">
${Object.entries(hidden)
  .map(([k, v]) => `<input type="hidden" name="${k}" value="${esc(v)}">`)
  .join('\n')}
<label>Email <input type="email" name="email" autocomplete="email"></label>
<label>Business name <input type="text" name="business_name"></label>
<button type="submit" name="decision" value="connect">Connect</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    );
  };

  const authorizeSubmit = (ctx: Koa.Context, f: FormObject) => {
    const get = (k: string) => (typeof f[k] === 'string' ? (f[k] as string) : '');
    const platform = accounts.byClientId(get('client_id'));
    const redirectUri = get('redirect_uri');
    if (!platform || !/^https?:\/\//.test(redirectUri)) return authorizePage(ctx, f);
    const state = get('state');
    if (get('decision') === 'deny') {
      ctx.redirect(
        withParams(redirectUri, {
          error: 'access_denied',
          error_description: 'The user denied your request',
          ...(state ? { state } : {}),
        }),
      );
      return;
    }
    const code: StripeObject = {
      id: `ac_${randomBase62(32)}`,
      object: 'oauth_code',
      client_id: platform._client_id,
      scope: get('scope') || 'read_write',
      redirect_uri: redirectUri,
      email: get('email') || null,
      business_name: get('business_name') || null,
      created: nowSeconds(),
      used: false,
    };
    repo.insert('oauth_codes', code);
    ctx.redirect(withParams(redirectUri, { scope: String(code.scope), code: code.id, ...(state ? { state } : {}) }));
  };

  const token = (ctx: Koa.Context, f: FormObject) => {
    const auth = ctx.get('authorization');
    const bearer = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
    const basic = /^Basic\s+(.+)$/i.exec(auth)?.[1];
    const secret =
      bearer ??
      (basic ? Buffer.from(basic, 'base64').toString('utf8').split(':')[0] : undefined) ??
      (typeof f.client_secret === 'string' ? f.client_secret : undefined);
    if (!secret)
      return oauthError(
        ctx,
        401,
        'invalid_client',
        'No authentication was provided. Send your secret API key using the Authorization header, or as a client_secret POST parameter.',
      );
    let platformKey = accounts.lookupKey(secret);
    if (!platformKey) {
      // A platform registered by client id alone takes the secret of its first exchange.
      const pending = typeof f.code === 'string' ? repo.get('oauth_codes', f.code) : undefined;
      const waiting = pending ? accounts.byClientId(String(pending.client_id)) : undefined;
      if (waiting && waiting._pinned === false && /^sk_(test|live)_[A-Za-z0-9]{8,}$/.test(secret)) {
        accounts.pin(waiting, secret);
        platformKey = accounts.lookupKey(secret);
      }
    }
    if (!platformKey) return oauthError(ctx, 401, 'invalid_client', `Invalid API Key provided: ${maskKey(secret)}`);
    const platform = accounts.get(platformKey.account)!;
    const grant = typeof f.grant_type === 'string' ? f.grant_type : '';
    if (grant === 'refresh_token') {
      const rt = typeof f.refresh_token === 'string' ? f.refresh_token : '';
      const mode = platformKey.livemode ? 'live' : 'test';
      const account = accounts.list().find((a) => a._platform === platform.id && a._refresh_tokens?.[mode] === rt);
      if (!account) return oauthError(ctx, 400, 'invalid_grant', `Invalid refresh token: ${rt.slice(0, 8)}…`);
      return sendJson(ctx, 200, tokenResponse(account, platformKey.livemode, 'read_write'));
    }
    if (grant !== 'authorization_code')
      return oauthError(ctx, 400, 'unsupported_grant_type', `Unsupported grant type: ${grant || '(none)'}`);
    const codeId = typeof f.code === 'string' ? f.code : '';
    if (!codeId) return oauthError(ctx, 400, 'invalid_request', 'No authorization code provided');
    const code = repo.get('oauth_codes', codeId);
    if (!code) return oauthError(ctx, 400, 'invalid_grant', `Authorization code does not exist: ${codeId}`);
    if (code.used) return oauthError(ctx, 400, 'invalid_grant', `Authorization code already used: ${codeId}`);
    if (nowSeconds() - Number(code.created) > CODE_TTL_S)
      return oauthError(ctx, 400, 'invalid_grant', `Authorization code expired: ${codeId}`);
    if (code.client_id !== platform._client_id)
      return oauthError(ctx, 400, 'invalid_grant', 'Authorization code provided does not belong to you');
    const account = accounts.ensure(newId('acct', 16), {
      platform: platform.id,
      email: (code.email as string | null) ?? undefined,
      business_name: (code.business_name as string | null) ?? undefined,
    });
    code.used = true;
    code.stripe_user_id = account.id;
    repo.touch();
    return sendJson(ctx, 200, tokenResponse(account, platformKey.livemode, String(code.scope)));
  };

  const deauthorize = (ctx: Koa.Context, f: FormObject) => {
    const secret =
      /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim() ??
      (typeof f.client_secret === 'string' ? f.client_secret : '');
    const platformKey = secret ? accounts.lookupKey(secret) : undefined;
    if (!platformKey) return oauthError(ctx, 401, 'invalid_client', 'No valid API key provided.');
    const account = typeof f.stripe_user_id === 'string' ? accounts.get(f.stripe_user_id) : undefined;
    if (!account || account._platform !== platformKey.account)
      return oauthError(
        ctx,
        400,
        'invalid_client',
        'This application is not connected to stripe account ' + String(f.stripe_user_id ?? ''),
      );
    delete account._platform;
    repo.touch();
    return sendJson(ctx, 200, { stripe_user_id: account.id });
  };

  return async (ctx, next) => {
    if (!ctx.path.startsWith('/oauth/')) return next();
    const form = ctx.method === 'POST' ? parseForm(await readRaw(ctx.req)) : {};
    if (ctx.path === '/oauth/authorize' && ctx.method === 'GET') return authorizePage(ctx, parseForm(ctx.querystring));
    if (ctx.path === '/oauth/authorize' && ctx.method === 'POST') return authorizeSubmit(ctx, form);
    if (ctx.path === '/oauth/token' && ctx.method === 'POST') return token(ctx, form);
    if (ctx.path === '/oauth/deauthorize' && ctx.method === 'POST') return deauthorize(ctx, form);
    return oauthError(ctx, 404, 'invalid_request', `Unrecognized request URL (${ctx.method}: ${ctx.path}).`);
  };
}
