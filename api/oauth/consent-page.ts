import type Router from '@koa/router';
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import { exactRouter } from '../router';
import type { Services } from '../../operations/services';
import type { Operation } from '../../operations/types';
import { connectAssistant } from '../../operations/assistants/connect';
import { denyAssistant } from '../../operations/assistants/deny';
import { listAssistants } from '../../operations/assistants/list';
import { revokeAssistant } from '../../operations/assistants/revoke';
import type { connectedAssistant } from '../../operations/assistants/schema';
import { getTenant } from '../../operations/tenant/get';
import { roleSummary, rolesWithin } from '../../domain/roles';
import { readForm } from '../dashboard/form';
import { formatDate, html } from '../dashboard/html';
import { csrfField, page } from '../dashboard/layout';
import { readThrough, runOperation } from '../dashboard/run-operation';
import { policyWithFormTarget } from '../dashboard/security-headers';
import type { SessionUser } from '../../db/dashboard-users';
import { accountIdOf, TOOLS_SCOPE, toolsResource } from './provider';
import type { z } from 'zod';

type Listed = z.infer<typeof connectedAssistant>;

export const ASSISTANTS_PAGE = '/settings/assistants';

/** The pending authorization behind the page, or undefined when it is gone (expired, finished, another browser's). */
async function pendingInteraction(provider: Provider, ctx: Koa.Context, uid: string) {
  try {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    return details.uid === uid ? details : undefined;
  } catch {
    return undefined;
  }
}

/** The asking client as the person sees it, or undefined when its registration is gone. */
async function askingClient(provider: Provider, details: { params: Record<string, unknown> }) {
  const clientId = String(details.params.client_id);
  const client = await provider.Client.find(clientId);
  if (!client) return undefined;
  return {
    client_id: clientId,
    client_name: (client.clientName ?? clientId).slice(0, 200),
    redirect_host: (URL.parse(String(details.params.redirect_uri))?.host ?? '').slice(0, 300),
  };
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
 * (`decision` = `approve` | `deny`). The decision is an operation run as the person
 * (`assistants.connect`, `assistants.deny`: the policy, the audit); this page finishes the
 * authorization with its answer. Beside it, the person's connected assistants with their last
 * use (`assistants.list`), each revocable at once (`assistants.revoke`).
 */
export function assistantPages(services: Services, provider: Provider): Router {
  const r = exactRouter();

  r.get('/assistants/consent/:uid', async (ctx) => {
    const user = ctx.state.user!;
    const details = await pendingInteraction(provider, ctx, ctx.params.uid);
    const asking = details && (await askingClient(provider, details));
    if (!details || !asking) return gone(ctx, user);
    const tenant = await readThrough<{ name: string }>(services, ctx, getTenant as Operation);
    const name = asking.client_name;
    // The answer is a redirect to the assistant's address: the browser must be let to follow it.
    const policy = policyWithFormTarget(String(details.params.redirect_uri));
    if (policy) ctx.set('Content-Security-Policy', policy);
    ctx.type = 'html';
    ctx.body = page({
      title: 'Connect an assistant',
      user,
      csrf: ctx.state.csrf!,
      body: html`<p><strong>${name}</strong> asks to use this account's tools on your behalf.</p>
<dl>
<dt>Assistant</dt><dd>${name}</dd>
<dt>Answers go to</dt><dd><code>${asking.redirect_host}</code></dd>
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
    const asking = details && (await askingClient(provider, details));
    if (!details || !asking) return gone(ctx, user);
    const refused = (error: string) => {
      ctx.type = 'html';
      ctx.body = page({
        title: 'Connect an assistant',
        user,
        csrf: ctx.state.csrf!,
        error,
        body: html`<p><a href="/assistants/consent/${details.uid}">Back</a></p>`,
      });
    };
    if (form.get('decision') !== 'approve') {
      const denied = await runOperation(services, ctx, denyAssistant as Operation, {
        client_id: asking.client_id,
        client_name: asking.client_name,
      });
      if ('error' in denied) return refused(denied.error);
      const to = await provider.interactionResult(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'The person denied the request.' },
        { mergeWithLastSubmission: false },
      );
      ctx.status = 303;
      return ctx.redirect(to);
    }
    const connected = await runOperation<{ grant_id: string }>(services, ctx, connectAssistant as Operation, {
      ...asking,
      role: form.get('role') ?? user.role,
      hold_writes: form.get('hold_writes') === '1',
    });
    if ('error' in connected) return refused(connected.error);
    // The authorization server's grant under the id the consent names: its codes and tokens carry it.
    const accountId = accountIdOf(user.tenant_id, user.id);
    const grant = new provider.Grant({ accountId, clientId: asking.client_id });
    grant.jti = connected.ok.grant_id;
    grant.addOIDCScope(TOOLS_SCOPE);
    grant.addResourceScope(toolsResource(services), TOOLS_SCOPE);
    const grantId = await grant.save();
    const to = await provider.interactionResult(
      ctx.req,
      ctx.res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    ctx.status = 303;
    ctx.redirect(to);
  });

  const listPage = async (ctx: Koa.Context, error?: string) => {
    const { data } = await readThrough<{ data: Listed[] }>(services, ctx, listAssistants as Operation);
    ctx.type = 'html';
    ctx.body = page({
      title: 'Connected assistants',
      user: ctx.state.user,
      csrf: ctx.state.csrf!,
      error,
      notice: ctx.query.revoked === '1' ? 'The assistant was disconnected: its access ended at once.' : undefined,
      body: assistantList(data, ctx.state.csrf!, services.config.publicToolsUrl),
    });
  };

  r.get(ASSISTANTS_PAGE, (ctx) => listPage(ctx));

  r.post(`${ASSISTANTS_PAGE}/:id/revoke`, async (ctx) => {
    await readForm(ctx);
    const revoked = await runOperation(services, ctx, revokeAssistant as Operation, { id: ctx.params.id });
    if ('error' in revoked) return listPage(ctx, revoked.error);
    ctx.status = 303;
    ctx.redirect(`${ASSISTANTS_PAGE}?revoked=1`);
  });

  return r;
}

function assistantList(rows: Listed[], csrf: string, toolsUrl: string) {
  const intro = html`<p>To connect an assistant, give it the tool server's address, <code>${toolsUrl}/</code>: it sends you to a page here to approve it. It acts on your behalf with your role, or the narrower one you chose.</p>`;
  if (rows.length === 0) return html`${intro}<p>No assistants connected yet.</p>`;
  return html`${intro}<div class="scroll" role="region" tabindex="0" aria-label="Connected assistants"><table><caption class="skip">Connected assistants</caption><thead><tr>
<th scope="col">Assistant</th><th scope="col">Answers go to</th><th scope="col">May do</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead><tbody>
${rows.map(
  (g) => html`<tr>
<td>${g.name}</td><td><code>${g.redirect_host}</code></td><td>${g.role}${g.hold_writes ? html`<br>Writes wait for approval` : ''}</td>
<td>${formatDate(g.created_at)}</td><td>${g.last_used_at ? formatDate(g.last_used_at) : 'Never'}</td>
<td>${
    g.revoked_at
      ? html`Disconnected ${formatDate(g.revoked_at)}`
      : html`<form class="inline" method="post" action="${ASSISTANTS_PAGE}/${g.id}/revoke">${csrfField(csrf)}<button type="submit" aria-label="Disconnect ${g.name}" class="flush">Disconnect</button></form>`
  }</td>
</tr>`,
)}
</tbody></table></div>`;
}
