import type Router from '@koa/router';
import { exactRouter } from '../router';
import type { z } from 'zod';
import { PROVIDERS } from '../../domain/providers';
import { listReconciliations } from '../../operations/reconciliations/list';
import type { repairRow } from '../../operations/reconciliations/schema';
import type { Services } from '../../operations/services';
import { customerHref } from './customers-page';
import { formatDate, html } from './html';
import { page } from './layout';
import { runOperation } from './run-operation';

type Repair = z.infer<typeof repairRow>;
type RepairPage = { data: Repair[]; pagination: { total: number | null; offset: number; has_more: boolean } };

const state = (s: { status: string; current_period_end: string | null } | null) =>
  s ? `${s.status}${s.current_period_end ? `, period ends ${formatDate(s.current_period_end)}` : ''}` : 'nothing held';

/**
 * Repairs (docs/reconciliation.md): the list the overview's health section links to, read with
 * the operation of GET /v1/reconciliations (reconciliations.list), newest first, by provider.
 * Read-only: a repair is made by a refresh or a scheduled run, never from this page.
 */
export function reconciliationsPage(services: Services): Router {
  const r = exactRouter();
  r.get('/reconciliations', async (ctx) => {
    const provider = typeof ctx.query.provider === 'string' && ctx.query.provider ? ctx.query.provider : undefined;
    const offset = Math.max(0, Number(ctx.query.offset) || 0);
    const found = await runOperation<RepairPage>(services, ctx, listReconciliations, {
      limit: 50,
      offset,
      ...(provider ? { provider } : {}),
    });
    const list = 'error' in found ? null : found.ok;
    ctx.type = 'html';
    ctx.body = page({
      title: 'Repairs',
      user: ctx.state.user!,
      csrf: ctx.state.csrf!,
      ...('error' in found ? { error: found.error } : {}),
      body: html`<p>Subscriptions whose state at the provider differed from what the service held (a notification lost or late), and what was applied to put them right. Newest first.</p>
<nav class="switch" aria-label="Provider"><span>Provider:</span><ul><li><a href="/reconciliations"${provider ? '' : html` aria-current="page"`}>All</a></li>${PROVIDERS.map((p) => html`<li><a href="/reconciliations?provider=${p}"${p === provider ? html` aria-current="page"` : ''}>${p}</a></li>`)}</ul></nav>
${
  !list || list.data.length === 0
    ? html`<p>No repair${provider ? html` for ${provider}` : ''}.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Repairs"><table><caption class="skip">Repairs, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Provider</th><th scope="col">Customer</th><th scope="col">Subscription</th><th scope="col">We held</th><th scope="col">The provider said</th><th scope="col">Applied</th></tr></thead><tbody>
${list.data.map(
  (x) =>
    html`<tr><td>${formatDate(x.created_at)}</td><td>${x.provider}</td><td>${x.app_user_id ? html`<a href="${customerHref(x.app_user_id)}">${x.app_user_id}</a>` : '—'}</td><td><code>${x.subscription_id}</code></td><td>${state(x.held)}</td><td>${state(x.provider_state)}</td><td>${x.applied.map((a) => a.kind).join(', ')}</td></tr>`,
)}
</tbody></table></div>
${list.pagination.has_more ? html`<p><a href="/reconciliations?${new URLSearchParams({ ...(provider ? { provider } : {}), offset: String(offset + 50) }).toString()}">Older repairs</a></p>` : ''}`
}`,
    });
  });
  return r;
}
