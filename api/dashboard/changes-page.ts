import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { HeldChangeRow } from '../../db/held-changes';
import { shownInput } from '../../domain/changes';
import { approveChange } from '../../operations';
import { rejectChange } from '../../operations/changes/approve';
import { listChanges, viewChange } from '../../operations/changes/list';
import type { Services } from '../../operations/services';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { readThrough, runOperation } from './run-operation';

type Named = HeldChangeRow & { key_name: string; assistant_name: string | null };

const STATUS_WORDS: Record<string, string> = {
  pending_approval: 'Waiting for approval',
  applied: 'Applied',
  rejected: 'Rejected',
  expired: 'Expired',
  stale: 'Stopped: no longer applies',
};

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** One change with its plan: what it would change, where, and the values it changes as they are now. */
function changeDetail(c: Named, csrf: string) {
  return html`<section aria-labelledby="change-${c.id}"><h2 id="change-${c.id}">${c.plan.summary}</h2>
<dl>
<dt>Status</dt><dd id="change-status-${c.id}">${STATUS_WORDS[c.status] ?? c.status}</dd>
${
  c.assistant_name !== null
    ? html`<dt>Asked by assistant</dt><dd>${c.assistant_name}</dd>`
    : html`<dt>Asked by key</dt><dd>${c.key_name}</dd>`
}
<dt>Write</dt><dd><code>${c.operation}</code></dd>
<dt>Lands at</dt><dd>${c.plan.targets.join(', ')}</dd>
<dt>Asked</dt><dd>${formatDate(c.created_at)}</dd>
<dt>${c.status === 'pending_approval' ? 'Expires' : 'Decided'}</dt><dd>${formatDate(c.status === 'pending_approval' ? c.expires_at : (c.decided_at ?? c.updated_at))}</dd>
</dl>
<h3>What it will write</h3>
<pre>${pretty(shownInput(c.input))}</pre>
${c.plan.before ? html`<h3>As it is now</h3><pre>${pretty(c.plan.before)}</pre>` : ''}
${c.outcome ? html`<h3>Outcome</h3><pre>${pretty(c.outcome)}</pre>` : ''}
${
  c.status === 'pending_approval'
    ? html`<form class="inline" method="post" action="/changes/${c.id}/approve">${csrfField(csrf)}<button type="submit" aria-label="Approve change ${c.id}">Approve</button></form>
<form class="inline" method="post" action="/changes/${c.id}/reject">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Reject change ${c.id}">Reject</button></form>`
    : ''
}
</section>`;
}

function decidedList(rows: HeldChangeRow[]) {
  if (rows.length === 0) return html``;
  return html`<h2>Recently decided</h2><div class="scroll" role="region" tabindex="0" aria-label="Recently decided changes"><table><caption class="skip">Recently decided changes</caption>
<thead><tr><th scope="col">Change</th><th scope="col">Write</th><th scope="col">Status</th><th scope="col">Decided</th></tr></thead><tbody>
${rows.map((c) => html`<tr><td><a href="/changes/${c.id}">${c.plan.summary}</a></td><td><code>${c.operation}</code></td><td>${STATUS_WORDS[c.status] ?? c.status}</td><td>${formatDate(c.decided_at ?? c.updated_at)}</td></tr>`)}
</tbody></table></div>`;
}

/**
 * Changes (docs/approvals.md): the writes keys that require approval asked for, each with its
 * plan, and Approve / Reject. Both buttons run operations (changes.approve, changes.reject) as
 * the signed-in person, so the policy decides who may (an account's manager; never a key).
 */
export function changesPage(services: Services): Router {
  const r = exactRouter();

  const renderList = async (ctx: Koa.Context, extra: { notice?: string; error?: string } = {}) => {
    const user = ctx.state.user!;
    const { pending, decided } = await readThrough<{ pending: Named[]; decided: Named[] }>(services, ctx, listChanges);
    ctx.type = 'html';
    ctx.body = page({
      title: 'Changes',
      user,
      csrf: ctx.state.csrf!,
      ...extra,
      body: html`<p>Writes made with a key that requires approval wait here. Nothing is written until you approve; if what a change was planned against has moved since, approving stops it and says so.</p>
${pending.length ? pending.map((c) => changeDetail(c, ctx.state.csrf!)) : html`<p>Nothing waits for approval.</p>`}
${decidedList(decided)}`,
    });
  };

  const renderOne = async (ctx: Koa.Context, id: string, extra: { notice?: string; error?: string } = {}) => {
    const user = ctx.state.user!;
    const found = await runOperation<Named>(services, ctx, viewChange, { id });
    if (!('ok' in found)) {
      ctx.status = 404;
      return renderList(ctx, { error: 'No such change.' });
    }
    const row = found.ok;
    ctx.type = 'html';
    ctx.body = page({
      title: 'Change',
      user,
      csrf: ctx.state.csrf!,
      ...extra,
      body: html`${changeDetail(row, ctx.state.csrf!)}<p><a href="/changes">All changes</a></p>`,
    });
  };

  r.get('/changes', (ctx) => renderList(ctx));
  r.get('/changes/:id', (ctx) => renderOne(ctx, ctx.params.id));

  for (const [verb, op] of [
    ['approve', approveChange],
    ['reject', rejectChange],
  ] as const) {
    r.post(`/changes/:id/${verb}`, async (ctx) => {
      await readForm(ctx);
      const done = await runOperation<{ status: string }>(services, ctx, op, { id: ctx.params.id });
      if ('error' in done) return renderOne(ctx, ctx.params.id, { error: done.error });
      await renderOne(ctx, ctx.params.id, { notice: `${STATUS_WORDS[done.ok.status] ?? done.ok.status}.` });
    });
  }
  return r;
}
