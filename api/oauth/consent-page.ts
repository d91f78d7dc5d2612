import type Router from '@koa/router';
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import { exactRouter } from '../router';
import type { Services } from '../../operations/services';
import {
  insertAssistantGrant,
  listAssistantGrants,
  revokeAssistantGrant,
  type AssistantGrantRow,
} from '../../db/assistant-grants';
import { deleteGrantRecords } from '../../db/oauth-records';
import { recordUserAudit } from '../../db/audit';
import { tenantProfile } from '../../db/tenants';
import { withTenant } from '../../db/tenant-tx';
import { isUuid } from '../../domain/ids';
import { ROLES, roleSummary, scopesOfRole, roleHasScope, type Role } from '../../domain/roles';
import { readForm } from '../dashboard/form';
import { formatDate, html } from '../dashboard/html';
import { csrfField, page } from '../dashboard/layout';
import type { SessionUser } from '../../db/dashboard-users';
import { accountIdOf, TOOLS_SCOPE, toolsResource } from './provider';

export const ASSISTANTS_PAGE = '/settings/assistants';

/** The roles a person may hand an assistant: their own, or any whose every scope theirs carries. */
export function rolesWithin(role: Role): Role[] {
  return ROLES.filter((r) => scopesOfRole(r).every((s) => roleHasScope(role, s)));
}

/** The pending authorization behind the page, or undefined when it is gone (expired, finished, another browser's). */
async function pendingInteraction(provider: Provider, ctx: Koa.Context, uid: string) {
  try {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    return details.uid === uid ? details : undefined;
  } catch {
    return undefined;
  }
}

function gone(ctx: Koa.Context, user: SessionUser) {
  ctx.status = 400;
  ctx.type = 'html';
  ctx.body = page({
    title: 'Connect an assistant',
    user,
    csrf: ctx.state.csrf!,
    error: 'This sign-in request has expired or was already answered. Start the connection again from the assistant.',
    body: html``,
  });
}

/**
 * The consent page (docs/assistant-sign-in.md): the signed-in person sees who asks (the client's
 * name, where it sends the answer), for which account, and what it may do — their role, or a
 * narrower one, and whether its writes wait for approval — and approves or denies in one form
 * (`decision` = `approve` | `deny`). Approving records the consent and finishes the
 * authorization; denying answers the assistant `access_denied`. Beside it, the person's
 * connected assistants with their last use, each revocable at once.
 */
export function assistantPages(services: Services, provider: Provider): Router {
  const r = exactRouter();
  const db = services.db;

  r.get('/assistants/consent/:uid', async (ctx) => {
    const user = ctx.state.user!;
    const details = await pendingInteraction(provider, ctx, ctx.params.uid);
    if (!details) return gone(ctx, user);
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) return gone(ctx, user);
    const tenant = await withTenant(db, user.tenant_id, (trx) => tenantProfile(trx));
    const redirectHost = URL.parse(String(details.params.redirect_uri))?.host ?? '';
    const name = client.clientName ?? client.clientId;
    ctx.type = 'html';
    ctx.body = page({
      title: 'Connect an assistant',
      user,
      csrf: ctx.state.csrf!,
      body: html`<p><strong>${name}</strong> asks to use this account's tools on your behalf.</p>
<dl>
<dt>Assistant</dt><dd>${name}</dd>
<dt>Answers go to</dt><dd><code>${redirectHost}</code></dd>
<dt>Account</dt><dd>${tenant.name}</dd>
<dt>Signed in as</dt><dd>${user.email} (${user.role})</dd>
</dl>
<form method="post" action="/assistants/consent/${details.uid}">
${csrfField(ctx.state.csrf!)}
<label for="assistant-role">What it may do</label>
<select id="assistant-role" name="role" aria-describedby="role-hint">
${rolesWithin(user.role).map((role) => html`<option value="${role}" ${role === user.role ? 'selected' : ''}>${role}: ${roleSummary(role)}</option>`)}
</select>
<p id="role-hint">Never more than your own role; if your role changes or you leave the team, the assistant's access follows at once.</p>
<label><input type="checkbox" name="hold_writes" value="1"> Writes wait for approval: every change it asks for waits on the Changes page until someone approves it.</label>
<p><button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button></p>
</form>`,
    });
  });

  r.post('/assistants/consent/:uid', async (ctx) => {
    const user = ctx.state.user!;
    const form = await readForm(ctx);
    const details = await pendingInteraction(provider, ctx, ctx.params.uid);
    if (!details) return gone(ctx, user);
    const decision = form.get('decision');
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    if (!client) return gone(ctx, user);
    const clientName = (client.clientName ?? clientId).slice(0, 200);
    if (decision !== 'approve') {
      const to = await provider.interactionResult(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'The person denied the request.' },
        { mergeWithLastSubmission: false },
      );
      await recordUserAudit(db, {
        tenantId: user.tenant_id,
        userId: user.id,
        action: 'assistants.deny',
        requestId: ctx.state.requestId,
        outcome: 'ok',
        detail: { client_id: clientId, client_name: clientName },
      });
      ctx.status = 303;
      return ctx.redirect(to);
    }
    const asked = form.get('role') ?? user.role;
    const role = rolesWithin(user.role).find((r) => r === asked);
    if (!role) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = page({
        title: 'Connect an assistant',
        user,
        csrf: ctx.state.csrf!,
        error: 'An assistant may do only what your own role allows. Choose one of the roles offered.',
        body: html`<p><a href="/assistants/consent/${details.uid}">Back</a></p>`,
      });
      return;
    }
    const accountId = accountIdOf(user.tenant_id, user.id);
    const grant = new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(TOOLS_SCOPE);
    grant.addResourceScope(toolsResource(services), TOOLS_SCOPE);
    const grantId = await grant.save();
    const row = await insertAssistantGrant(db, {
      tenant_id: user.tenant_id,
      user_id: user.id,
      grant_id: grantId,
      client_id: clientId,
      client_name: clientName,
      redirect_host: (URL.parse(String(details.params.redirect_uri))?.host ?? '').slice(0, 300),
      role,
      hold_writes: form.get('hold_writes') === '1',
    });
    await recordUserAudit(db, {
      tenantId: user.tenant_id,
      userId: user.id,
      action: 'assistants.connect',
      requestId: ctx.state.requestId,
      outcome: 'ok',
      detail: { assistant_id: row.id, client_name: clientName, role, hold_writes: row.hold_writes },
    });
    const to = await provider.interactionResult(
      ctx.req,
      ctx.res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    ctx.status = 303;
    ctx.redirect(to);
  });

  r.get(ASSISTANTS_PAGE, async (ctx) => {
    const user = ctx.state.user!;
    const rows = await listAssistantGrants(db, user.tenant_id, user.id);
    ctx.type = 'html';
    ctx.body = page({
      title: 'Connected assistants',
      user,
      csrf: ctx.state.csrf!,
      notice: ctx.query.revoked === '1' ? 'The assistant was disconnected: its access ended at once.' : undefined,
      body: assistantList(rows, ctx.state.csrf!, services.config.publicToolsUrl),
    });
  });

  r.post(`${ASSISTANTS_PAGE}/:id/revoke`, async (ctx) => {
    const user = ctx.state.user!;
    await readForm(ctx);
    const id = ctx.params.id;
    const row = isUuid(id) ? await revokeAssistantGrant(db, user.tenant_id, user.id, id) : undefined;
    if (row) {
      await deleteGrantRecords(db, row.grant_id);
      await recordUserAudit(db, {
        tenantId: user.tenant_id,
        userId: user.id,
        action: 'assistants.revoke',
        requestId: ctx.state.requestId,
        outcome: 'ok',
        detail: { assistant_id: row.id, client_name: row.client_name },
      });
    }
    ctx.status = 303;
    ctx.redirect(`${ASSISTANTS_PAGE}?revoked=1`);
  });

  return r;
}

function assistantList(rows: AssistantGrantRow[], csrf: string, toolsUrl: string) {
  const intro = html`<p>To connect an assistant, give it the tool server's address, <code>${toolsUrl}/</code>: it sends you to a page here to approve it. It acts on your behalf with your role, or the narrower one you chose.</p>`;
  if (rows.length === 0) return html`${intro}<p>No assistants connected yet.</p>`;
  return html`${intro}<div class="scroll" role="region" tabindex="0" aria-label="Connected assistants"><table><caption class="skip">Connected assistants</caption><thead><tr>
<th scope="col">Assistant</th><th scope="col">Answers go to</th><th scope="col">May do</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead><tbody>
${rows.map(
  (g) => html`<tr>
<td>${g.client_name}</td><td><code>${g.redirect_host}</code></td><td>${g.role}${g.hold_writes ? html`<br>Writes wait for approval` : ''}</td>
<td>${formatDate(g.created_at)}</td><td>${g.last_used_at ? formatDate(g.last_used_at) : 'Never'}</td>
<td>${
    g.revoked_at
      ? html`Disconnected ${formatDate(g.revoked_at)}`
      : html`<form class="inline" method="post" action="${ASSISTANTS_PAGE}/${g.id}/revoke">${csrfField(csrf)}<button type="submit" aria-label="Disconnect ${g.client_name}" class="flush">Disconnect</button></form>`
  }</td>
</tr>`,
)}
</tbody></table></div>`;
}
