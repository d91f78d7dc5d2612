import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import type { ListedKey } from '../../db/api-keys';
import type { AppKeys } from '../../db/apps';
import { listApiKeysOp } from '../../operations/api-keys/list';
import { listApps } from '../../operations/apps/list';
import { keyCeilingOf, type KeyCeiling } from '../../domain/roles';
import { scopeDescription } from '../../domain/scopes';
import { createApiKey } from '../../operations/api-keys/create';
import { revokeApiKeyOp } from '../../operations/api-keys/revoke';
import { MAX_KEY_EXPIRY_DAYS } from '../../operations/api-keys/schema';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { readThrough, runOperation } from './run-operation';
import { SESSION_COOKIE } from './session';
import { parkSecret, takeSecret } from '../../db/session-secret';
import { publishableKeys } from './publishable-keys';
import { listRevenueCatKeysFor, revenuecatKeyRoutes, revenuecatKeysSection } from './revenuecat-keys';

function keyList(keys: ListedKey[], csrf: string) {
  if (keys.length === 0) return html`<p>No secret keys yet.</p>`;
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Secret keys"><table><caption class="skip">Secret keys</caption><thead><tr>
<th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Minted by</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expiry</th><th scope="col">Status</th></tr></thead><tbody>
${keys.map(
  (k) => html`<tr>
<td>${k.name}</td><td><code>${k.key_hint}</code></td><td>${k.scopes.join(', ')}${k.require_approval ? html`<br>Writes wait for approval` : ''}</td>
<td>${mintedBy(k)}</td><td>${formatDate(k.created_at)}</td><td>${k.last_used_at ? formatDate(k.last_used_at) : 'Never'}</td><td>${k.expires_at ? formatDate(k.expires_at) : 'Never'}</td>
<td>${
    k.revoked_at
      ? html`Revoked ${formatDate(k.revoked_at)}`
      : html`<form class="inline" method="post" action="/settings/developer-api/keys/${k.id}/revoke">${csrfField(csrf)}<button type="submit" aria-label="Revoke ${k.name}" class="flush">Revoke</button></form>`
  }</td>
</tr>`,
)}
</tbody></table></div>`;
}

/** Who minted a key: a member's email, or the operator (admin CLI, tenant creation). */
const mintedBy = (k: ListedKey) => k.created_by_email ?? 'Operator';

/** The form offers what the person's role lets them mint and no more (domain/roles.ts `keyCeilingOf`). */
function createForm(
  csrf: string,
  ceiling: KeyCeiling,
  values: { name?: string; scopes?: string[]; expires?: string; requireApproval?: boolean } = {},
) {
  return html`<form method="post" action="/settings/developer-api/keys">
${csrfField(csrf)}
<label for="key-name">Name</label>
<input id="key-name" name="name" type="text" required maxlength="100" value="${values.name ?? ''}">
<fieldset><legend>Scopes</legend>
${ceiling.scopes.map((s) => {
  const hint = `scope-${s.replace(':', '-')}`;
  return html`<div><label><input type="checkbox" name="scopes" value="${s}" aria-describedby="${hint}" ${values.scopes?.includes(s) ? 'checked' : ''}>${s}</label>
<small id="${hint}">${scopeDescription(s)}</small></div>`;
})}
</fieldset>
<label for="expires">Expires after (days, optional)</label>
<input id="expires" name="expires_in_days" type="number" min="1" max="${MAX_KEY_EXPIRY_DAYS}" inputmode="numeric" value="${values.expires ?? ''}" aria-describedby="expires-hint">
<p id="expires-hint">Leave empty for a key that does not expire.</p>
${
  ceiling.approvalRequired
    ? html`<input type="hidden" name="require_approval" value="1">
<p id="approval-hint">Writes wait for approval: every write made with this key changes nothing until an owner approves it on the Changes page. Your role's own writes wait for approval, so every key you mint does too.</p>`
    : html`<label><input type="checkbox" name="require_approval" value="1" aria-describedby="approval-hint" ${values.requireApproval ? 'checked' : ''}>Writes wait for approval</label>
<p id="approval-hint">Every write made with this key (an assistant's tool call, a REST request) changes nothing until an owner approves it on the Changes page.</p>`
}
<button type="submit">Create key</button>
</form>`;
}

function shownOnce(secret: string) {
  return html`<section aria-labelledby="new-key"><h2 id="new-key">Your new key</h2>
<p>Copy it now: it is shown this once and cannot be shown again.</p>
<p><label for="new-key-value">Secret key</label>
<input id="new-key-value" type="text" readonly value="${secret}" class="secret">
<button type="button" class="secondary" data-copy="new-key-value">Copy</button></p>
</section>`;
}

export function keysPage(services: Services): Router {
  const { db } = services;
  const r = exactRouter();

  // The page's reads are operations run as the person: the keys (an account operation) and the apps.
  const list = async (ctx: Koa.Context) =>
    (await readThrough<{ data: ListedKey[] }>(services, ctx, listApiKeysOp)).data;
  const apps = async (ctx: Koa.Context) => (await readThrough<{ data: AppKeys[] }>(services, ctx, listApps)).data;

  const render = async (
    ctx: Koa.Context,
    extra: {
      notice?: string;
      error?: string;
      created?: string;
      createdRevenueCat?: string;
      values?: Parameters<typeof createForm>[2];
    } = {},
  ) => {
    const user = ctx.state.user!;
    const [keys, appRows, rcKeys] = await Promise.all([list(ctx), apps(ctx), listRevenueCatKeysFor(services, ctx)]);
    ctx.type = 'html';
    // The page that shows a secret must never be cached or replayed from history.
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page({
      title: 'Developer API',
      user,
      csrf: ctx.state.csrf!,
      notice: extra.notice,
      error: extra.error,
      body: html`${extra.created ? shownOnce(extra.created) : ''}
${publishableKeys(appRows, services.config.publicApiUrl, services.config.publicDashboardUrl)}
<h2>Secret keys</h2>
<p>Secret keys authenticate calls to <code>/v1</code> as <code>Authorization: Bearer sk_…</code>. Keep them on servers and in CI, never in an app.</p>
<h3>Create a secret key</h3>
${createForm(ctx.state.csrf!, keyCeilingOf(user.role), extra.values)}
<h3>Your secret keys</h3>
${keyList(keys, ctx.state.csrf!)}
${revenuecatKeysSection({ keys: rcKeys, csrf: ctx.state.csrf!, role: user.role, apiUrl: services.config.publicApiUrl, created: extra.createdRevenueCat })}`,
    });
  };

  // Post/redirect/get: the POST parks the new key on the session and redirects here; this
  // GET takes it off as it shows it, so a reload shows it no more and mints nothing.
  r.get('/settings/developer-api', async (ctx) => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    const pending = token ? await takeSecret(db, token) : undefined;
    if (pending?.kind === 'revenuecat_key')
      return render(ctx, {
        createdRevenueCat: pending.secret,
        notice: `${pending.name} created: copy it below, under “Keys for RevenueCat’s SDKs”; it is shown this once.`,
      });
    await render(ctx, pending ? { created: pending.secret, notice: `Key "${pending.name}" created.` } : {});
  });

  // Both writes are operations (api_keys.create, api_keys.revoke) run as the signed-in person:
  // their validation, their audit row (the person, surface dashboard), never a key's.
  r.post('/settings/developer-api/keys', async (ctx) => {
    const form = await readForm(ctx);
    const values = {
      name: form.get('name') ?? '',
      scopes: form.getAll('scopes'),
      expires: form.get('expires_in_days') ?? '',
      requireApproval: form.get('require_approval') === '1',
    };
    // The form's text as the operation's number: empty is no expiry; anything else the operation judges.
    const expires = values.expires.trim();
    const made = await runOperation<{ name: string; secret: string }>(services, ctx, createApiKey, {
      name: values.name,
      scopes: values.scopes,
      ...(expires === '' ? {} : { expires_in_days: Number(expires) }),
      ...(values.requireApproval ? { require_approval: true } : {}),
    });
    if ('error' in made) return render(ctx, { error: made.error, values });
    // Post/redirect/get: the value waits sealed on the session and is shown once by the GET.
    await parkSecret(db, ctx.cookies.get(SESSION_COOKIE)!, { name: made.ok.name, secret: made.ok.secret });
    ctx.status = 303;
    ctx.redirect('/settings/developer-api');
  });

  r.post('/settings/developer-api/keys/:id/revoke', async (ctx) => {
    await readForm(ctx);
    const revoked = await runOperation<{ name: string }>(services, ctx, revokeApiKeyOp, { id: ctx.params.id });
    if ('error' in revoked) return render(ctx, { error: revoked.error });
    await render(ctx, { notice: `Key "${revoked.ok.name}" revoked. Requests made with it are refused from now on.` });
  });

  revenuecatKeyRoutes(r, services, render);
  return r;
}
