import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { z } from 'zod';
import type { Services } from '../../operations/services';
import type { Operation } from '../../operations/types';
import { findCustomers } from '../../operations/customers/find';
import { eraseCustomerOp } from '../../operations/customers/erase';
import { getCustomer } from '../../operations/customers/get';
import { summarizeProducts, type productSummary } from '../../operations/products/summaries';
import { grantEntitlement } from '../../operations/grants/create';
import { revokeGrantOp } from '../../operations/grants/revoke';
import { approveTransfer } from '../../operations/transfers/approve';
import { listTransfers } from '../../operations/transfers/list';
import { rejectTransfer } from '../../operations/transfers/reject';
import type { transferRow } from '../../operations/transfers/schema';
import { undoTransfer } from '../../operations/transfers/undo';
import { mayAct } from './page-access';
import type { customerEntitlement, timelineEntry } from '../../operations/customers/schema';
import { readForm } from './form';
import { formatDate, html, type SafeHtml } from './html';
import { csrfField, page } from './layout';
import { readThrough, runOperation } from './run-operation';

type Transfer = z.infer<typeof transferRow>;

/** The transfer buttons, by what the transfer allows now (docs/transfers.md). */
const TRANSFER_VERBS = { approve: approveTransfer, reject: rejectTransfer, undo: undoTransfer } as const;

type Customer = {
  app_user_id: string;
  is_premium: boolean;
  entitlements: z.infer<typeof customerEntitlement>[];
  attributes: { name: string; value: string }[];
  timeline: { data: z.infer<typeof timelineEntry>[]; pagination: { offset: number; total: number | null } };
};

/** The customer page of an app user (every list that shows one links here). */

/** Where an entitlement comes from, as the page says it: provisional access names itself until confirmed. */
function sourceLabel(e: { source: string; provider: string | null }): string {
  if (e.source === 'grant') return 'granted';
  if (e.source === 'provisional') return `provisional, ${e.provider}: payment received, not yet confirmed`;
  return `paid, ${e.provider}`;
}

export const customerHref = (appUserId: string) => `/customers/${encodeURIComponent(appUserId)}`;

function searchForm(q = ''): SafeHtml {
  return html`<form method="get" action="/customers" role="search" aria-label="Find a customer">
<label for="customer-q">App user id or email</label>
<input id="customer-q" name="q" type="text" required maxlength="200" value="${q}">
<button type="submit">Find</button></form>`;
}

function why(e: Customer['entitlements'][number]): SafeHtml {
  const w = e.why;
  const s = w.subscription;
  return html`<p>${w.explanation} <small>(rule <code>${w.rule}</code>)</small></p>
${w.matches_stored_state ? '' : html`<p class="error">The rule gives ${w.state_by_rule ?? 'nothing'} now, the record says ${e.state}: a change is still to be written.</p>`}
${
  s
    ? html`<p>Subscription ${s.provider} (${s.mode}), ${s.status}${s.status_since ? html` since ${formatDate(s.status_since)}` : ''}${s.current_period_end ? html`, period ends ${formatDate(s.current_period_end)}` : ''}.
${s.provider_customer_id ? html`Provider customer <code>${s.provider_customer_id}</code>.` : ''}
${s.store_purchase?.token_hash ? html`Purchase token hash <code>${s.store_purchase.token_hash}</code>.` : ''}
${s.store_purchase?.original_transaction_id ? html`Original transaction <code>${s.store_purchase.original_transaction_id}</code>.` : ''}
${s.store_purchase ? (s.store_purchase.is_sandbox ? 'Sandbox.' : 'Production.') : ''}</p>`
    : ''
}
${w.grant ? html`<p>Granted by <code>${w.grant.granted_by}</code>: “${w.grant.reason}”${w.grant.revoked_by ? html`; revoked by <code>${w.grant.revoked_by}</code>` : ''}.</p>` : ''}
${w.last_event ? html`<p>Last provider event: ${w.last_event.event_type} (${w.last_event.outcome}), ${formatDate(w.last_event.at)}.</p>` : ''}
${w.workflow_id ? html`<p>Workflow <code>${w.workflow_id}</code></p>` : ''}`;
}

/** Where a timeline entry's record is shown in the dashboard. */
function recordLink(appUserId: string, x: Customer['timeline']['data'][number]): SafeHtml {
  const d = x.detail as Record<string, string | undefined>;
  switch (x.record.type) {
    case 'webhook_delivery':
      return html`<a href="/webhook-deliveries?provider=${d.provider ?? ''}&amp;event_type=${encodeURIComponent(d.event_type ?? '')}">delivery</a>`;
    case 'subscription':
      return html`<a href="/subscribers?provider=${d.provider ?? ''}">subscription</a>`;
    case 'entitlement':
      return html`<a href="/entitlements?app_user_id=${encodeURIComponent(appUserId)}">entitlement</a>`;
    case 'outbound_delivery':
      return html`<a href="/webhook-endpoints/${d.endpoint_id ?? ''}">delivery</a>`;
    case 'grant':
      return html`<a href="#grant-${x.record.id}">grant</a>`;
    default:
      return html`${x.record.type}`;
  }
}

function summary(x: Customer['timeline']['data'][number]): string {
  const d = x.detail as Record<string, unknown>;
  switch (x.kind) {
    case 'provider_event':
      return `${d.provider} ${d.event_type}: ${d.outcome}${d.reason ? ` (${d.reason})` : ''}`;
    case 'subscription_change':
      return `${d.provider} subscription ${d.from_status ?? 'new'} → ${d.to_status}`;
    case 'entitlement_state':
      return `${d.provider} entitlement is ${d.state}`;
    case 'store_purchase_registered':
      return `${d.provider} purchase registered (token hash ${d.token_hash})`;
    case 'grant':
      return `granted until ${formatDate(d.expires_at as string)} by ${d.by}: ${d.reason}`;
    case 'grant_revoked':
      return `grant revoked by ${d.by}`;
    case 'grant_expired':
      return 'grant reached its end';
    case 'import_line':
      return `imported from a ${d.provider} file, line ${d.line}: ${d.outcome ?? 'waiting'}${d.reason ? ` (${d.reason})` : ''}`;
    case 'reconciliation_repair':
      return `repaired from ${d.provider}: it said ${(d.provider_state as { status?: string } | null)?.status ?? 'unknown'}`;
    case 'outbound_delivery':
      return `${d.event_type} to your endpoint: ${d.status} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`;
    case 'transfer':
      return `${d.provider} purchase ${d.status === 'pending' ? 'asked to move' : 'moved'} from ${d.from_app_user_id} to ${d.to_app_user_id}: ${d.status}`;
  }
}

/**
 * The support desk in the dashboard (docs/support.md): find a customer by app user id or email,
 * read their page (the API's own `customers.get`: entitlements with why, the timeline, paged),
 * grant and revoke access by hand (`grants.create`, `grants.revoke`, run as the signed-in
 * person and audited under their name). Workflow ids are shown as text, as on the webhook
 * endpoints page.
 */
export function customersPage(services: Services): Router {
  const r = exactRouter();
  const run = <T = unknown>(ctx: Koa.Context, op: Operation, input: Record<string, unknown>) =>
    runOperation<T>(services, ctx, op, input);

  const render = async (
    ctx: Koa.Context,
    appUserId: string,
    extra: { notice?: string; error?: string; offset?: string } = {},
  ) => {
    const user = ctx.state.user!;
    const status = ctx.status;
    const read = await run<Customer>(ctx, getCustomer as Operation, {
      app_user_id: appUserId,
      ...(extra.offset ? { offset: extra.offset } : {}),
    });
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    if ('error' in read) {
      ctx.body = page({
        title: 'Customer',
        user,
        csrf: ctx.state.csrf!,
        error: read.code === 'not_found' ? `No customer ${appUserId} in this account.` : read.error,
        body: searchForm(appUserId),
      });
      return;
    }
    // A write's refusal keeps its status; the page itself read fine.
    if (extra.error) ctx.status = status;
    const c = read.ok;
    const csrf = ctx.state.csrf!;
    const { data: products } = await readThrough<{ data: z.infer<typeof productSummary>[] }>(
      services,
      ctx,
      summarizeProducts as Operation,
    );
    // Restores that moved (or ask to move) a purchase to or from them, with the decisions the person may take.
    const moved = await run<{ data: Transfer[] }>(ctx, listTransfers as Operation, {
      app_user_id: appUserId,
      limit: 20,
    });
    // A refused list leaves the page as it was (a write's refusal keeps its status; else the page read fine).
    if ('error' in moved) ctx.status = extra.error ? status : 200;
    const transfers = 'error' in moved ? [] : moved.ok.data;
    const decides = mayAct(user.role, '/customers/transfers');
    const erases = mayAct(user.role, '/customers/erase');
    const now = Date.now();
    const verbsOf = (t: Transfer): (keyof typeof TRANSFER_VERBS)[] =>
      t.status === 'pending'
        ? ['approve', 'reject']
        : t.status === 'completed' && t.undo_until && Date.parse(t.undo_until) >= now
          ? ['undo']
          : [];
    const { offset, total } = c.timeline.pagination;
    const shown = c.timeline.data.length;
    const base = customerHref(c.app_user_id);
    ctx.body = page({
      title: `Customer ${c.app_user_id}`,
      user,
      csrf,
      notice: extra.notice,
      error: extra.error,
      body: html`${searchForm()}
<p id="premium-answer">${c.is_premium ? 'Premium: the SDK answers yes.' : 'Not premium: the SDK answers no.'}</p>
<h2>Entitlements</h2>
${
  c.entitlements.length === 0
    ? html`<p>None.</p>`
    : html`<ul class="entitlements">${c.entitlements.map(
        (
          e,
        ) => html`<li id="${e.source === 'grant' ? `grant-${e.id}` : `entitlement-${e.id}`}"><h3>${e.sku ?? 'no product'}: ${e.why.provisional && e.why.provisional.status !== 'provisional' ? e.why.provisional.status : e.state} (${sourceLabel(e)})</h3>
${e.expires_at ? html`<p>Ends ${formatDate(e.expires_at)}.</p>` : ''}
${why(e)}
${
  e.source === 'grant' && e.state === 'active'
    ? html`<form method="post" action="${base}/grants/${e.id}/revoke">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Revoke grant of ${e.sku ?? 'product'}">Revoke grant</button></form>`
    : ''
}</li>`,
      )}</ul>`
}
${
  transfers.length === 0
    ? ''
    : html`<h2>Transfers</h2>
<ul class="transfers">${transfers.map(
        (
          t,
        ) => html`<li id="transfer-${t.id}"><p>${t.provider} purchase ${t.status === 'pending' ? 'asked to move' : 'moved'} from <a href="${customerHref(t.from_app_user_id)}">${t.from_app_user_id}</a> to <a href="${customerHref(t.to_app_user_id)}">${t.to_app_user_id}</a>, ${formatDate(t.created_at)}: <strong>${t.status}</strong>${t.status === 'completed' && t.undo_until ? html` (can be undone until ${formatDate(t.undo_until)})` : ''}.</p>
${decides ? verbsOf(t).map((v) => html`<form class="inline" method="post" action="/customers/transfers/${t.id}/${v}">${csrfField(csrf)}<input type="hidden" name="app_user_id" value="${c.app_user_id}"><button type="submit" ${v === 'approve' ? '' : 'class="secondary"'} aria-label="${v} transfer from ${t.from_app_user_id} to ${t.to_app_user_id}">${v[0].toUpperCase() + v.slice(1)}</button></form>`) : ''}</li>`,
      )}</ul>`
}
${
  c.attributes.length === 0
    ? ''
    : html`<h2>Attributes</h2>
<dl class="attributes">${c.attributes.map((a) => html`<dt>${a.name}</dt><dd>${a.value}</dd>`)}</dl>`
}
<h2>Grant access</h2>
<form method="post" action="${base}/grants">${csrfField(csrf)}
<label for="grant-sku">Product</label>
<select id="grant-sku" name="sku" required>${products.map((p) => html`<option value="${p.sku}">${p.sku}</option>`)}</select>
<label for="grant-days">Days</label>
<input id="grant-days" name="duration_days" type="number" min="1" max="3650" value="30" required class="narrow" inputmode="numeric">
<label for="grant-reason">Reason</label>
<input id="grant-reason" name="reason" type="text" required maxlength="500">
<button type="submit">Grant</button></form>
<h2>Timeline</h2>
<p>${total ?? 0} in all, newest first.</p>
${
  shown === 0
    ? html`<p>Nothing yet.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Timeline"><table><caption class="skip">Timeline</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Record</th><th scope="col">Workflow</th></tr></thead><tbody>
${c.timeline.data.map((x) => html`<tr><td>${formatDate(x.at)}</td><td>${summary(x)}</td><td>${recordLink(c.app_user_id, x)}</td><td>${x.workflow_id ? html`<code>${x.workflow_id}</code>` : '—'}</td></tr>`)}
</tbody></table></div>`
}
${total !== null && offset + shown < total ? html`<p><a href="${base}?offset=${offset + shown}">Older entries</a></p>` : ''}
${
  erases
    ? html`<h2>Erase personal data</h2>
<p>Deletes this customer’s attributes (such as their email and name), support notes and linked app user ids, and empties the buyer emails of their purchases; emails in their recorded events are replaced by a hash. Subscriptions, entitlements and grants stay. This cannot be undone.</p>
<form method="post" action="/customers/erase">${csrfField(csrf)}<input type="hidden" name="app_user_id" value="${c.app_user_id}">
<label for="erase-confirm">Type the app user id to confirm</label>
<input id="erase-confirm" name="confirm" type="text" required autocomplete="off">
<button type="submit" class="secondary">Erase personal data</button></form>`
    : ''
}`,
    });
  };

  r.get('/customers', async (ctx) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    const user = ctx.state.user!;
    ctx.type = 'html';
    if (!q) {
      ctx.body = page({
        title: 'Customers',
        user,
        csrf: ctx.state.csrf!,
        body: html`<p>Find one customer’s whole story: their access and why, and everything that happened to them.</p>${searchForm()}`,
      });
      return;
    }
    const found = q.includes('@') ? await run<{ data: string[] }>(ctx, findCustomers as Operation, { email: q }) : null;
    const byEmail = found && 'ok' in found ? found.ok.data : [];
    if (byEmail.length === 1) return ctx.redirect(customerHref(byEmail[0]));
    if (byEmail.length > 1) {
      ctx.body = page({
        title: 'Customers',
        user,
        csrf: ctx.state.csrf!,
        body: html`${searchForm(q)}<h2>App users with this email</h2><ul>${byEmail.map((u) => html`<li><a href="${customerHref(u)}">${u}</a></li>`)}</ul>`,
      });
      return;
    }
    ctx.redirect(customerHref(q));
  });

  r.get('/customers/:appUserId', async (ctx) => {
    const offset = typeof ctx.query.offset === 'string' ? ctx.query.offset : undefined;
    await render(ctx, ctx.params.appUserId, { offset });
  });

  r.post('/customers/:appUserId/grants', async (ctx) => {
    const form = await readForm(ctx);
    const days = Number(form.get('duration_days'));
    const made = await run(ctx, grantEntitlement as Operation, {
      app_user_id: ctx.params.appUserId,
      sku: form.get('sku') ?? '',
      duration_days: Number.isFinite(days) ? days : form.get('duration_days'),
      reason: form.get('reason') ?? '',
    });
    await render(ctx, ctx.params.appUserId, 'error' in made ? { error: made.error } : { notice: 'Access granted.' });
  });

  r.post('/customers/:appUserId/grants/:id/revoke', async (ctx) => {
    await readForm(ctx);
    const done = await run(ctx, revokeGrantOp as Operation, { app_user_id: ctx.params.appUserId, id: ctx.params.id });
    await render(ctx, ctx.params.appUserId, 'error' in done ? { error: done.error } : { notice: 'Grant revoked.' });
  });

  // Erasing cannot be undone: the person types the app user id, as a confirmation the browser cannot skip.
  r.post('/customers/erase', async (ctx) => {
    const form = await readForm(ctx);
    const appUserId = form.get('app_user_id') ?? '';
    if (!appUserId) {
      ctx.status = 404;
      return;
    }
    if ((form.get('confirm') ?? '').trim() !== appUserId) {
      ctx.status = 400;
      await render(ctx, appUserId, {
        error: 'Type the app user id exactly to confirm the erasure; nothing was erased.',
      });
      return;
    }
    const done = await run<{ erased: boolean; erased_as: string }>(ctx, eraseCustomerOp as Operation, {
      app_user_id: appUserId,
    });
    // The id is gone: the billing records are shown under the pseudonym they are kept under.
    await render(
      ctx,
      'error' in done ? appUserId : done.ok.erased_as,
      'error' in done
        ? { error: done.error }
        : {
            notice: done.ok.erased
              ? 'Personal data erased; the billing records are kept under this pseudonym.'
              : 'Already erased; the billing records are kept under this pseudonym.',
          },
    );
  });

  r.post('/customers/transfers/:id/:verb', async (ctx) => {
    const form = await readForm(ctx);
    const verb = ctx.params.verb as keyof typeof TRANSFER_VERBS;
    const back = form.get('app_user_id') ?? '';
    if (!Object.hasOwn(TRANSFER_VERBS, verb) || !back) {
      ctx.status = 404;
      return;
    }
    const done = await run<Transfer>(ctx, TRANSFER_VERBS[verb] as Operation, { id: ctx.params.id });
    await render(ctx, back, 'error' in done ? { error: done.error } : { notice: `Transfer ${done.ok.status}.` });
  });

  return r;
}
