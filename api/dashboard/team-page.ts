import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import type { ListedKey } from '../../db/api-keys';
import type { Member, PendingInvitation } from '../../db/team';
import { listTeam } from '../../operations/team/list';
import { mayAssignRole, roleSummary, ROLES, type Role } from '../../domain/roles';
import { changeMemberRole } from '../../operations/team/change-role';
import { inviteMember } from '../../operations/team/invite';
import { removeTeamMember } from '../../operations/team/remove';
import { revokeTeamInvitation } from '../../operations/team/revoke-invitation';
import { disconnectMemberAssistant } from '../../operations/assistants/disconnect';
import { listTeamAssistants, type memberAssistant } from '../../operations/assistants/list-team';
import type { z } from 'zod';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { readThrough, runOperation } from './run-operation';

type Msg = { notice?: string; error?: string; link?: { email: string; url: string; expires: string } };

function roleOptions(actor: Role, selected?: string) {
  return ROLES.filter((r) => mayAssignRole(actor, r)).map(
    (r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${r}</option>`,
  );
}

function shownOnce(link: NonNullable<Msg['link']>) {
  return html`<section aria-labelledby="new-invitation"><h2 id="new-invitation">Invitation link for ${link.email}</h2>
<p>No email is sent and the address is not checked: whoever opens this link chooses the password and joins under this address, so give it to them yourself. It is shown this once, works once, and expires ${formatDate(link.expires)}.</p>
<p><label for="invitation-link">Invitation link</label>
<input id="invitation-link" type="text" readonly value="${link.url}" class="secret">
<button type="button" class="secondary" data-copy="invitation-link">Copy</button></p>
</section>`;
}

/** A member's live keys, by name: what removing them can revoke. */
function keysOf(keys: ListedKey[], memberId: string) {
  return keys.filter((k) => k.created_by_user_id === memberId && !k.revoked_at);
}

/**
 * Removing a member offers revoking the keys they minted, ticked: they have seen each key's value,
 * so keeping one working after they leave is the choice to make on purpose (docs/team.md).
 */
function removeForm(m: Member, minted: ListedKey[], csrf: string) {
  return html`<form class="inline" method="post" action="/settings/team/members/${m.id}/remove">${csrfField(csrf)}
${
  minted.length
    ? html`<label><input type="checkbox" name="revoke_keys" value="1" checked>Also revoke the ${minted.length === 1 ? 'key' : `${minted.length} keys`} ${m.email} minted</label>`
    : ''
}<button type="submit" class="secondary flush" aria-label="Remove ${m.email}">Remove</button></form>`;
}

function memberRows(members: Member[], keys: ListedKey[], me: { id: string; role: Role }, csrf: string) {
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Members"><table><caption class="skip">Members</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Member since</th><th scope="col">Keys they minted</th><th scope="col">Change</th></tr></thead><tbody>
${members.map((m) => {
  const editable = mayAssignRole(me.role, m.role);
  const minted = keysOf(keys, m.id);
  return html`<tr><td>${m.email}${m.id === me.id ? ' (you)' : ''}</td><td>${m.role}</td><td>${formatDate(m.created_at)}</td><td>${
    minted.length ? minted.map((k) => k.name || 'unnamed key').join(', ') : 'None'
  }</td><td>${
    editable
      ? html`<form class="inline" method="post" action="/settings/team/members/${m.id}/role">${csrfField(csrf)}
<label for="role-${m.id}">Role for ${m.email}</label><select id="role-${m.id}" name="role">${roleOptions(me.role, m.role)}</select>
<button type="submit" class="flush">Change role</button></form>
${removeForm(m, minted, csrf)}`
      : 'Only an owner changes an owner.'
  }</td></tr>`;
})}
</tbody></table></div>`;
}

function invitationRows(invitations: PendingInvitation[], csrf: string) {
  if (invitations.length === 0) return html`<p>No invitation is waiting.</p>`;
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Pending invitations"><table><caption class="skip">Pending invitations</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col">Withdraw</th></tr></thead><tbody>
${invitations.map(
  (i) => html`<tr><td>${i.email}</td><td>${i.role}</td><td>${formatDate(i.expires_at)}</td><td>
<form class="inline" method="post" action="/settings/team/invitations/${i.id}/revoke">${csrfField(csrf)}
<button type="submit" class="secondary flush" aria-label="Withdraw the invitation of ${i.email}">Withdraw</button></form></td></tr>`,
)}
</tbody></table></div>`;
}

type MemberAssistant = z.infer<typeof memberAssistant>;

/**
 * Every member's connected assistants, each with a Disconnect (an owner's only for an owner, as
 * for changing an owner): for when a member is away, leaves or lost the device the assistant ran on.
 */
function assistantRows(rows: MemberAssistant[], me: { id: string; role: Role }, csrf: string) {
  if (rows.length === 0) return html`<p>No member has an assistant connected.</p>`;
  return html`<div class="scroll" role="region" tabindex="0" aria-label="Members’ connected assistants"><table><caption class="skip">Members’ connected assistants</caption>
<thead><tr><th scope="col">Member</th><th scope="col">Assistant</th><th scope="col">Answers go to</th><th scope="col">May do</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col">Disconnect</th></tr></thead><tbody>
${rows.map(
  (
    a,
  ) => html`<tr><td>${a.member_email}${a.member_id === me.id ? ' (you)' : ''}</td><td>${a.name}</td><td><code>${a.redirect_host}</code></td>
<td>${a.role}${a.hold_writes ? html`<br>Writes wait for approval` : ''}</td><td>${formatDate(a.created_at)}</td><td>${a.last_used_at ? formatDate(a.last_used_at) : 'Never'}</td><td>${
    mayAssignRole(me.role, a.member_role)
      ? html`<form class="inline" method="post" action="/settings/team/assistants/${a.id}/disconnect">${csrfField(csrf)}<button type="submit" class="secondary flush" aria-label="Disconnect ${a.name} of ${a.member_email}">Disconnect</button></form>`
      : 'Only an owner disconnects an owner’s assistant.'
  }</td></tr>`,
)}
</tbody></table></div>`;
}

/**
 * The team: members and their roles, pending invitations, the invitation form, and the members'
 * connected assistants. Every write is a team operation run as the signed-in person; the page
 * itself is for owners and admins only (page-access.ts).
 */
export function teamPages(services: Services): Router {
  const r = exactRouter();

  const render = async (ctx: Koa.Context, msg: Msg = {}, values: { email?: string; role?: string } = {}) => {
    const user = ctx.state.user!;
    const csrf = ctx.state.csrf!;
    const { members, invitations, keys } = await readThrough<{
      members: Member[];
      invitations: PendingInvitation[];
      keys: ListedKey[];
    }>(services, ctx, listTeam);
    const assistants = await readThrough<{ data: MemberAssistant[] }>(services, ctx, listTeamAssistants);
    ctx.type = 'html';
    // The page that shows an invitation link must never be cached or replayed from history.
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page({
      title: 'Team',
      user,
      csrf,
      notice: msg.notice,
      error: msg.error,
      body: html`${msg.link ? shownOnce(msg.link) : ''}
<h2>Invite someone</h2>
<form method="post" action="/settings/team/invitations">${csrfField(csrf)}
<label for="invite-email">Email</label>
<input id="invite-email" name="email" type="email" autocomplete="off" required maxlength="254" value="${values.email ?? ''}">
<label for="invite-role">Role</label>
<select id="invite-role" name="role" aria-describedby="roles-help">${roleOptions(user.role, values.role ?? 'viewer')}</select>
<button type="submit">Create invitation link</button>
</form>
<h2>Members</h2>
${memberRows(members, keys, user, csrf)}
<h2>Pending invitations</h2>
${invitationRows(invitations, csrf)}
<h2>Connected assistants</h2>
<p>Assistants members connected to act on their behalf. Disconnecting one ends its access at once; its member can connect it again.</p>
${assistantRows(assistants.data, user, csrf)}
<h2 id="roles-help">Roles</h2>
<dl>${ROLES.map((role) => html`<dt>${role}</dt><dd>${roleSummary(role)}</dd>`)}</dl>`,
    });
  };

  r.get('/settings/team', (ctx) => render(ctx));

  r.post('/settings/team/invitations', async (ctx) => {
    const form = await readForm(ctx);
    const values = { email: (form.get('email') ?? '').trim(), role: form.get('role') ?? '' };
    const made = await runOperation<{ token: string; expires_at: string }>(services, ctx, inviteMember, values);
    if ('error' in made) return render(ctx, { error: made.error }, values);
    // Shown in this answer and nowhere else: the stored hash cannot make the link again.
    await render(ctx, {
      notice: `Invitation for ${values.email} created.`,
      link: {
        email: values.email.toLowerCase(),
        url: `${services.config.publicDashboardUrl}/invitations/${made.ok.token}`,
        expires: made.ok.expires_at,
      },
    });
  });

  r.post('/settings/team/invitations/:id/revoke', async (ctx) => {
    await readForm(ctx);
    const done = await runOperation(services, ctx, revokeTeamInvitation, { id: ctx.params.id });
    await render(
      ctx,
      'error' in done ? { error: done.error } : { notice: 'Invitation withdrawn: its link no longer works.' },
    );
  });

  r.post('/settings/team/members/:id/role', async (ctx) => {
    const form = await readForm(ctx);
    const done = await runOperation<{ role: string }>(services, ctx, changeMemberRole, {
      user_id: ctx.params.id,
      role: form.get('role') ?? '',
    });
    if (!('error' in done) && ctx.params.id === ctx.state.user!.id) {
      // Their own role changed: this page may no longer be theirs to see.
      ctx.status = 303;
      return ctx.redirect('/overview');
    }
    await render(ctx, 'error' in done ? { error: done.error } : { notice: `Role changed to ${done.ok.role}.` });
  });

  r.post('/settings/team/assistants/:id/disconnect', async (ctx) => {
    await readForm(ctx);
    const done = await runOperation<{ name: string }>(services, ctx, disconnectMemberAssistant, { id: ctx.params.id });
    await render(
      ctx,
      'error' in done
        ? { error: done.error }
        : { notice: `${done.ok.name} was disconnected: its access ended at once.` },
    );
  });

  r.post('/settings/team/members/:id/remove', async (ctx) => {
    const form = await readForm(ctx);
    const done = await runOperation<{ revoked_keys: string[] }>(services, ctx, removeTeamMember, {
      user_id: ctx.params.id,
      ...(form.get('revoke_keys') === '1' ? { revoke_keys: true } : {}),
    });
    if (!('error' in done) && ctx.params.id === ctx.state.user!.id) {
      // They removed themselves: their session is gone with their membership.
      ctx.status = 303;
      return ctx.redirect('/login');
    }
    await render(
      ctx,
      'error' in done
        ? { error: done.error }
        : {
            notice: `Member removed. Their sessions have ended${
              done.ok.revoked_keys.length
                ? `, and the ${done.ok.revoked_keys.length === 1 ? 'key' : `${done.ok.revoked_keys.length} keys`} they minted ${done.ok.revoked_keys.length === 1 ? 'is' : 'are'} revoked`
                : ''
            }.`,
          },
    );
  });

  return r;
}
