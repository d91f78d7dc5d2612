import type Router from '@koa/router';
import type Koa from 'koa';
import type { z } from 'zod';
import { RESTORE_BEHAVIORS, UNDO_HOURS, type RestoreBehavior } from '../../domain/transfers';
import type { Services } from '../../operations/services';
import { getTransferSettings } from '../../operations/transfer-settings/get';
import { updateTransferSettings } from '../../operations/transfer-settings/update';
import type { transferSettingsBody } from '../../operations/transfers/schema';
import type { Operation } from '../../operations/types';
import { exactRouter } from '../router';
import { readForm } from './form';
import { html } from './html';
import { csrfField, page } from './layout';
import { mayAct } from './page-access';
import { runOperation } from './run-operation';

type Settings = z.infer<typeof transferSettingsBody>;

/** What each restore policy does, as the settings page says it. */
const MEANING: Record<RestoreBehavior, string> = {
  keep_with_original:
    'Keep with the original: the purchase stays with the app user who has it; a restore by someone else is refused.',
  transfer: 'Transfer: access moves at once to the app user who restored; it can be undone within the window below.',
  review:
    'Review: the app user who has it keeps access; the restore waits on the customer page for someone to approve or reject it.',
};

/**
 * Settings → Transfers (docs/transfers.md): what a restore of a purchase another app user holds
 * does, and how long a transfer can be undone. Read and written with the operations of
 * `GET/PATCH /v1/settings/transfers`, as the signed-in person.
 */
export function transfersSettingsPage(services: Services): Router {
  const r = exactRouter();
  const render = async (ctx: Koa.Context, extra: { notice?: string; error?: string } = {}) => {
    const status = ctx.status;
    const read = await runOperation<Settings>(services, ctx, getTransferSettings as Operation, {});
    if (extra.error) ctx.status = status;
    const user = ctx.state.user!;
    const csrf = ctx.state.csrf!;
    const s = 'error' in read ? null : read.ok;
    const writable = mayAct(user.role, '/settings/transfers');
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page({
      title: 'Transfers',
      user,
      csrf,
      notice: extra.notice,
      error: extra.error ?? ('error' in read ? read.error : undefined),
      body: s
        ? html`<p>When a customer restores purchases while signed in as someone else (a new account, a family device), the purchase may belong to another app user. Choose what happens.</p>
<ul>${RESTORE_BEHAVIORS.map((b) => html`<li>${MEANING[b]}</li>`)}</ul>
${
  writable
    ? html`<form method="post" action="/settings/transfers">${csrfField(csrf)}
<label for="restore-behavior">When a restore finds the purchase with another app user</label>
<select id="restore-behavior" name="restore_behavior">${RESTORE_BEHAVIORS.map((b) => html`<option value="${b}" ${s.restore_behavior === b ? 'selected' : ''}>${b}</option>`)}</select>
<label for="undo-hours">Hours a transfer can be undone (${UNDO_HOURS.min}–${UNDO_HOURS.max})</label>
<input id="undo-hours" name="undo_hours" type="number" min="${UNDO_HOURS.min}" max="${UNDO_HOURS.max}" step="any" value="${s.undo_hours}" required class="narrow">
<button type="submit">Save</button></form>`
    : html`<p id="transfer-settings">Now: <strong>${s.restore_behavior}</strong>; a transfer can be undone for ${s.undo_hours} hours.</p>`
}`
        : html``,
    });
  };

  r.get('/settings/transfers', async (ctx) => render(ctx));

  r.post('/settings/transfers', async (ctx) => {
    const form = await readForm(ctx);
    const hours = Number(form.get('undo_hours'));
    const saved = await runOperation(services, ctx, updateTransferSettings as Operation, {
      restore_behavior: form.get('restore_behavior') ?? undefined,
      undo_hours: form.get('undo_hours') !== null && Number.isFinite(hours) ? hours : form.get('undo_hours'),
    });
    await render(ctx, 'error' in saved ? { error: saved.error } : { notice: 'Saved.' });
  });

  return r;
}
