import crypto from 'node:crypto';
import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import type { SafeConnection } from '../../db/connections';
import { getConnection, listConnections } from '../../operations/providers/connections';
import { MODES, PROVIDERS, WEB_PROVIDERS, type ProviderId } from '../../domain/providers';
import { claimsOnlyByOAuth, OAUTH_ONLY_PROVIDERS } from '../../domain/account-proof';
import type { ProviderCredential } from '../../providers/types';
import { ApiError } from '../../operations/errors';
import type { Operation } from '../../operations/types';
import { connectProvider } from '../../operations/providers/connect';
import { connectProviderOAuth } from '../../operations/providers/connect-oauth';
import { setDefaultProvider } from '../../operations/providers/set-default';
import { updateProviderCredentials } from '../../operations/providers/update-credentials';
import { verifyProvider } from '../../operations/providers/verify';
import { readThrough, runOperation } from './run-operation';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { CREDENTIAL_FIELDS, WEBHOOK_SECRET_LABEL } from './provider-fields';
import { cookieOptions } from './session';

const OAUTH_STATE_COOKIE = 'dash_oauth_state';

const setOrNot = (b: boolean) => (b ? 'set' : 'not set');

function webhookUrl(services: Services, provider: ProviderId): string {
  return `${services.config.publicDashboardUrl.replace(/\/$/, '')}/api/webhooks/${provider}`;
}

const PROOF_LABEL = {
  oauth: 'OAuth',
  control_api: 'emulator',
  provider_call: 'provider call',
  pasted_key: 'pasted key, until the account is connected with OAuth',
} as const;

/** Whether the connection has proven its account (only then do its events arrive), and why not. */
function proofState(c: SafeConnection): string {
  if (c.verified_at) return `Verified (${PROOF_LABEL[c.verified_by ?? 'provider_call']})`;
  if (c.proof_error) return `Not verified: ${c.proof_error}`;
  return c.proof_checked_at ? 'Not verified' : 'Not verified yet';
}

/** What routes this connection's events, said on its page (docs/providers.md, "Proving an account"). */
function proofHelp(services: Services, c: SafeConnection) {
  const oauth = services.config.oauthClients[c.provider]
    ? html`<a href="/providers/${c.provider}/oauth/start">Connect ${c.provider} with OAuth</a>.`
    : html`OAuth is not configured on this service for ${c.provider}: ask its operator.`;
  if (c.verified_by === 'pasted_key') {
    return html`<p>This connection receives its account's events because its key was verified before a pasted ${c.provider} key stopped proving an account. Connect the account with OAuth to keep them: whoever connects it with OAuth receives them from then on. ${oauth}</p>`;
  }
  if (c.verified_at) return '';
  if (claimsOnlyByOAuth(c.provider)) {
    return html`<p>Events for a ${c.provider} account are delivered only to a connection made with OAuth: ${c.provider} keys name no account, so a pasted key proves only that it works. Keys entered below are used for API calls (sync). ${oauth}</p>`;
  }
  return html`<p>Events for this account are delivered only once the connection is verified: OAuth verifies it, otherwise a call to ${c.provider} with the credentials below, for this account, must succeed.</p>`;
}

function connectionRows(list: SafeConnection[]) {
  if (list.length === 0) return html`<p>No provider is connected yet.</p>`;
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Connections"><table><caption class="skip">Connections</caption><thead><tr><th scope="col">Provider</th><th scope="col">Account</th><th scope="col">Default</th>
<th scope="col">Test credential</th><th scope="col">Live credential</th><th scope="col">Webhook secret</th><th scope="col">Verified</th><th scope="col">Connected</th></tr></thead><tbody>
${list.map(
  (
    c,
  ) => html`<tr><td>${c.provider}</td><td><a href="/providers/${c.id}">${c.label || c.account_ref}</a></td><td>${c.is_default ? 'Default' : 'No'}</td>
<td>${setOrNot(c.has_test_credential)}</td><td>${setOrNot(c.has_live_credential)}</td><td>${setOrNot(c.has_webhook_secret)}</td><td>${proofState(c)}</td><td>${formatDate(c.created_at)}</td></tr>`,
)}
</tbody></table></div>`;
}

interface EnteredSecrets {
  credentials?: Partial<Record<(typeof MODES)[number], ProviderCredential>>;
  webhook_secret?: string;
}

/** Reads `<mode>.<field>` inputs into credentials; a mode whose fields are all empty is left unchanged. */
function secretsFromForm(provider: ProviderId, form: URLSearchParams): EnteredSecrets {
  const credentials: NonNullable<EnteredSecrets['credentials']> = {};
  for (const mode of MODES) {
    const cred: ProviderCredential = {};
    for (const f of CREDENTIAL_FIELDS[provider]) {
      const v = (form.get(`${mode}.${f.name}`) ?? '').trim();
      if (v) cred[f.name] = v;
    }
    if (Object.keys(cred).length > 0) credentials[mode] = cred;
  }
  const webhook = (form.get('webhook_secret') ?? '').trim();
  return {
    ...(Object.keys(credentials).length ? { credentials } : {}),
    ...(webhook ? { webhook_secret: webhook } : {}),
  };
}

/** Names of what was entered (for the notice): never the values. */
function enteredNames(s: EnteredSecrets): string[] {
  return [
    ...Object.keys(s.credentials ?? {}).map((m) => `${m}_credential`),
    ...(s.webhook_secret ? ['webhook_secret'] : []),
  ];
}

function secretInputs(provider: ProviderId) {
  const webhookLabel = WEBHOOK_SECRET_LABEL[provider];
  return html`${MODES.map(
    (mode) => html`<fieldset><legend>${mode === 'test' ? 'Test' : 'Live'} credentials</legend>
${CREDENTIAL_FIELDS[provider].map((f) => {
  const id = `${mode}-${f.name}`;
  return html`<label for="${id}">${mode === 'test' ? 'Test' : 'Live'} ${f.label}</label>
${f.multiline ? html`<textarea id="${id}" name="${mode}.${f.name}" autocomplete="off" spellcheck="false"></textarea>` : html`<input id="${id}" name="${mode}.${f.name}" type="password" autocomplete="off">`}`;
})}</fieldset>`,
  )}
${webhookLabel ? html`<label for="webhook-secret">${webhookLabel}</label><input id="webhook-secret" name="webhook_secret" type="password" autocomplete="off">` : ''}`;
}

export function providersPage(services: Services): Router {
  const r = exactRouter();
  // Every write here is an account operation (providers.*), audited as the person's.
  const run = <T = unknown>(ctx: Koa.Context, op: Operation, input: Record<string, unknown>) =>
    runOperation<T>(services, ctx, op, input);

  const renderList = async (ctx: Koa.Context, msg: { notice?: string; error?: string } = {}) => {
    const user = ctx.state.user!;
    const { data: list } = await readThrough<{ data: SafeConnection[] }>(services, ctx, listConnections as Operation);
    const oauth = WEB_PROVIDERS.filter(
      (p) => services.config.oauthClients[p] && services.adapters[p].exchangeOAuthCode,
    );
    ctx.type = 'html';
    ctx.body = page({
      title: 'Providers',
      user,
      csrf: ctx.state.csrf!,
      ...msg,
      body: html`<h2>Connections</h2>${connectionRows(list)}
${oauth.length ? html`<h2>Connect with OAuth</h2><ul>${oauth.map((p) => html`<li><a href="/providers/${p}/oauth/start">Connect ${p}</a></li>`)}</ul>` : ''}
<h2>Add a connection with keys</h2>
<p>${OAUTH_ONLY_PROVIDERS.join(' and ')}: a connection added with keys works for API calls (sync), but only a connection made with OAuth receives the account's events.</p>
<form method="post" action="/providers">${csrfField(ctx.state.csrf!)}
<label for="provider">Provider</label>
<select id="provider" name="provider">${PROVIDERS.map((p) => html`<option value="${p}">${p}</option>`)}</select>
<label for="account-ref">Account ID</label><input id="account-ref" name="account_ref" type="text" required maxlength="255">
<label for="label">Label (optional)</label><input id="label" name="label" type="text" maxlength="200">
<button type="submit">Add connection</button></form>
<h2>Webhook URLs</h2><p>Register these at each provider:</p>
<ul>${PROVIDERS.map((p) => html`<li>${p}: <code>${webhookUrl(services, p)}</code></li>`)}</ul>`,
    });
  };

  const renderOne = async (ctx: Koa.Context, c: SafeConnection, msg: { notice?: string; error?: string } = {}) => {
    ctx.type = 'html';
    ctx.body = page({
      title: `${c.provider} · ${c.label || c.account_ref}`,
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      ...msg,
      body: html`<dl><dt>Account</dt><dd>${c.account_ref}</dd><dt>Default</dt><dd>${c.is_default ? 'Yes' : 'No'}</dd>
<dt>Verified</dt><dd>${proofState(c)}${c.verified_at ? html` <span>since ${formatDate(c.verified_at)}</span>` : ''}</dd>
<dt>Test credential</dt><dd>${setOrNot(c.has_test_credential)}</dd><dt>Live credential</dt><dd>${setOrNot(c.has_live_credential)}</dd>
<dt>Webhook secret</dt><dd>${setOrNot(c.has_webhook_secret)}</dd>
<dt>Webhook URL</dt><dd><code>${webhookUrl(services, c.provider)}</code></dd></dl>
${proofHelp(services, c)}
<form method="post" action="/providers/${c.id}/verify">${csrfField(ctx.state.csrf!)}<button type="submit">Verify</button></form>
${c.is_default ? '' : html`<form method="post" action="/providers/${c.id}/default">${csrfField(ctx.state.csrf!)}<button type="submit">Make default</button></form>`}
<h2>Credentials and webhook secret</h2>
<p>Stored values are never shown. Fill in only what you want to replace.</p>
<form method="post" action="/providers/${c.id}/secrets">${csrfField(ctx.state.csrf!)}
${secretInputs(c.provider)}
<button type="submit">Save secrets</button></form>
<p><a href="/providers">Back to providers</a></p>`,
    });
  };

  // The connection of the path, read with providers.connection as the person; null when there is none.
  const loadOne = async (ctx: Koa.Context) => {
    const found = await run<SafeConnection>(ctx, getConnection as Operation, { id: ctx.params.id as string });
    return 'ok' in found ? found.ok : null;
  };
  const notFound = (ctx: Koa.Context) => {
    ctx.status = 404;
    return renderList(ctx, { error: 'No such connection.' });
  };

  r.get('/providers', (ctx) =>
    renderList(ctx, ctx.query.connected ? { notice: 'Connected. The new connection is listed below.' } : {}),
  );

  r.post('/providers', async (ctx) => {
    const form = await readForm(ctx);
    const made = await run<SafeConnection>(ctx, connectProvider, {
      provider: form.get('provider') ?? '',
      account_ref: (form.get('account_ref') ?? '').trim(),
      label: (form.get('label') ?? '').trim(),
    });
    if ('error' in made) return renderList(ctx, { error: made.error });
    ctx.redirect(`/providers/${made.ok.id}`);
  });

  r.get('/providers/:id', async (ctx) => {
    const c = await loadOne(ctx);
    return c ? renderOne(ctx, c) : notFound(ctx);
  });

  r.post('/providers/:id/secrets', async (ctx) => {
    const form = await readForm(ctx);
    const c = await loadOne(ctx);
    if (!c) return notFound(ctx);
    const secrets = secretsFromForm(c.provider, form);
    const entered = enteredNames(secrets);
    if (entered.length === 0) {
      ctx.status = 400;
      return renderOne(ctx, c, { error: 'Nothing was entered.' });
    }
    const saved = await run<SafeConnection & { proving: boolean }>(ctx, updateProviderCredentials, {
      id: c.id,
      ...secrets,
    });
    if ('error' in saved) return renderOne(ctx, c, { error: saved.error });
    await renderOne(ctx, saved.ok, {
      notice: `Saved: ${entered.join(', ').replace(/_/g, ' ')}.${saved.ok.proving ? ' Verifying the credentials with the provider.' : ''}`,
    });
  });

  // Verify: run the proof now and wait for it, so the page shows its outcome.
  r.post('/providers/:id/verify', async (ctx) => {
    await readForm(ctx);
    const c = await loadOne(ctx);
    if (!c) return notFound(ctx);
    const checked = await run<{
      outcome: 'verified' | 'not_verified' | 'running' | 'unavailable';
      connection: SafeConnection;
    }>(ctx, verifyProvider, { id: c.id });
    if ('error' in checked) return renderOne(ctx, c, { error: checked.error });
    const { outcome, connection: after } = checked.ok;
    if (outcome === 'unavailable') {
      ctx.status = 503;
      return renderOne(ctx, after, {
        error: 'Verification is unavailable right now (the worker cannot be reached). Try again later.',
      });
    }
    if (outcome === 'running') {
      ctx.status = 202;
      return renderOne(ctx, after, { notice: 'Verification is still running; reload this page in a moment.' });
    }
    await renderOne(
      ctx,
      after,
      outcome === 'verified'
        ? { notice: "Verified: this connection receives its account's events." }
        : { error: `Not verified: ${after.proof_error ?? 'the provider did not confirm this account'}` },
    );
  });

  r.post('/providers/:id/default', async (ctx) => {
    await readForm(ctx);
    const c = await loadOne(ctx);
    if (!c) return notFound(ctx);
    const updated = await run<SafeConnection>(ctx, setDefaultProvider, { id: c.id });
    if ('error' in updated) return renderOne(ctx, c, { error: updated.error });
    await renderOne(ctx, updated.ok, { notice: `This is now the default ${c.provider} connection.` });
  });

  // OAuth: the state is random, kept in an HttpOnly SameSite=Lax cookie (sent on the top-level
  // redirect back) and compared on return, so a callback cannot be forged into someone's session.
  r.get('/providers/:provider/oauth/start', (ctx) => {
    const provider = ctx.params.provider as ProviderId;
    const client = services.config.oauthClients[provider];
    if (!(WEB_PROVIDERS as readonly string[]).includes(provider) || !client)
      return renderList(ctx, { error: `OAuth is not configured for ${ctx.params.provider}.` });
    const state = crypto.randomBytes(24).toString('base64url');
    ctx.cookies.set(
      OAUTH_STATE_COOKIE,
      `${provider}.${state}`,
      cookieOptions(ctx, new Date(Date.now() + 10 * 60 * 1000)),
    );
    const url = new URL('/oauth/authorize', services.config.providerBaseUrls[provider]);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      scope: 'read_write',
      state,
      // From configuration, never from Host / X-Forwarded-Host: a forged header must not send
      // the provider's authorisation code to another site. PUBLIC_DASHBOARD_URL is also where
      // people open the dashboard, so the state cookie comes back with them.
      redirect_uri: `${services.config.publicDashboardUrl}/providers/${provider}/oauth/callback`,
    }).toString();
    ctx.redirect(url.toString());
  });

  r.get('/providers/:provider/oauth/callback', async (ctx) => {
    const provider = ctx.params.provider as ProviderId;
    const expected = ctx.cookies.get(OAUTH_STATE_COOKIE);
    ctx.cookies.set(OAUTH_STATE_COOKIE, '', cookieOptions(ctx, new Date(0)));
    const client = services.config.oauthClients[provider];
    const adapter = services.adapters[provider];
    const given = `${provider}.${String(ctx.query.state ?? '')}`;
    if (
      !expected ||
      !client ||
      !adapter?.exchangeOAuthCode ||
      expected.length !== given.length ||
      !crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(given))
    ) {
      // Nothing was written: the request log keeps it, not the audit trail.
      ctx.state.log.warn({ provider, code: 'invalid_state' }, 'oauth connect refused');
      ctx.status = 400;
      return renderList(ctx, {
        error: 'The connection could not be verified (state mismatch or expired). Start again.',
      });
    }
    if (ctx.query.error || typeof ctx.query.code !== 'string') {
      ctx.state.log.warn({ provider, code: 'denied' }, 'oauth connect refused');
      ctx.status = 400;
      return renderList(ctx, { error: `${provider} did not grant access.` });
    }
    let made: Awaited<ReturnType<typeof run<SafeConnection>>>;
    try {
      made = await run<SafeConnection>(ctx, connectProviderOAuth, { provider, code: ctx.query.code });
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'provider_error') throw e;
      made = { error: e.detail ?? e.code, code: e.code };
    }
    if ('error' in made) {
      ctx.status = made.code === 'account_already_connected' ? 409 : 502;
      ctx.state.log.warn({ provider, code: made.code }, 'oauth connect failed');
      return renderList(ctx, { error: made.error });
    }
    ctx.redirect(`/providers?connected=${encodeURIComponent(made.ok.id)}`);
  });

  return r;
}
