import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import { z } from 'zod';
import type { Services } from '../../operations/services';
import { parkSecret, takeSecret } from '../../db/session-secret';
import { OUTBOUND_EVENT_TYPES, ROTATION_OVERLAP_SECONDS } from '../../domain/outbound-events';
import { outboundWorkflowId } from '../../temporal/workflow-starts';
import type { Operation } from '../../operations/types';
import { readThrough, runOperation } from './run-operation';
import { mayAct } from './page-access';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { SESSION_COOKIE } from './session';
import { replayFailedDeliveries } from '../../operations/outbound-deliveries/replay-failed';
import { replayOutboundEvent } from '../../operations/outbound-events/replay';
import { deleteEndpointOp } from '../../operations/webhook-endpoints/delete';
import { rotateEndpointSecretOp } from '../../operations/webhook-endpoints/rotate-secret';
import { updateEndpointOp } from '../../operations/webhook-endpoints/update';
import { createEndpoint } from '../../operations/webhook-endpoints/create';
import { getEndpoint } from '../../operations/webhook-endpoints/get';
import { listEndpoints } from '../../operations/webhook-endpoints/list';
import type { endpoint as endpointShape } from '../../operations/webhook-endpoints/schema';
import { listOutboundDeliveries } from '../../operations/outbound-deliveries/list';
import { recentOutboundAttempts } from '../../operations/outbound-deliveries/recent-attempts';
import type { attempt as attemptShape } from '../../operations/outbound-deliveries/attempts';
import type { delivery as deliveryShape } from '../../operations/outbound-events/schema';

type Endpoint = ReturnType<typeof endpointShape>;
type Delivery = ReturnType<typeof deliveryShape>;
type Attempt = ReturnType<typeof attemptShape>;

const isId = (v: string) => z.uuid().safeParse(v).success;

function createForm(csrf: string, values: { url?: string; description?: string; types?: string[] } = {}) {
  return html`<form method="post" action="/webhook-endpoints">
${csrfField(csrf)}
<label for="endpoint-url">URL</label>
<input id="endpoint-url" name="url" type="url" required maxlength="2048" value="${values.url ?? ''}" aria-describedby="url-hint">
<p id="url-hint">Your backend’s address; deliveries are signed POSTs (Standard Webhooks). Private and loopback addresses are refused unless the operator allows them.</p>
<label for="endpoint-description">Description (optional)</label>
<input id="endpoint-description" name="description" type="text" maxlength="500" value="${values.description ?? ''}">
<fieldset><legend>Events (none checked: all)</legend>
${OUTBOUND_EVENT_TYPES.map((t) => html`<label><input type="checkbox" name="event_types" value="${t}" ${values.types?.includes(t) ? 'checked' : ''}>${t}</label>`)}
</fieldset>
<button type="submit">Add endpoint</button>
</form>`;
}

function secretOnce(secret: string) {
  return html`<section aria-labelledby="new-secret"><h2 id="new-secret">Your new signing secret</h2>
<p>Copy it now: it is shown this once. Verify deliveries with it using any Standard Webhooks library.</p>
<p><label for="new-secret-value">Signing secret</label>
<input id="new-secret-value" type="text" readonly value="${secret}" class="secret">
<button type="button" class="secondary" data-copy="new-secret-value">Copy</button></p>
</section>`;
}

const status = (e: Endpoint) => (e.enabled ? 'Enabled' : `Disabled: ${e.disabled_reason ?? 'no reason recorded'}`);

/**
 * Outbound webhook endpoints in the dashboard: add one (its secret shown once, after a
 * redirect, as the developer keys page does), enable, disable (the reason is shown), rotate the
 * secret with an overlap, delete; the delivery log with every attempt, the endpoint's workflow id
 * as text (no link: the Temporal UI is the operator's and shows every tenant), and replay of one
 * event or of every failure since a time.
 * Writes are the API's operations (webhook_endpoints.*, outbound_events.replay,
 * outbound_deliveries.replay_failed), audited as the person's with surface `dashboard`.
 */
export function webhookEndpointsPage(services: Services): Router {
  const { db } = services;
  const r = exactRouter();
  const run = <T = unknown>(ctx: Koa.Context, op: Operation, input: Record<string, unknown>) =>
    runOperation<T>(services, ctx, op, input);

  const renderList = async (
    ctx: Koa.Context,
    extra: { error?: string; notice?: string; values?: Parameters<typeof createForm>[1] } = {},
  ) => {
    const user = ctx.state.user!;
    const endpoints = await readThrough<{ data: Endpoint[] }>(services, ctx, listEndpoints as Operation, {
      limit: 200,
    });
    ctx.type = 'html';
    ctx.body = page({
      title: 'Webhook endpoints',
      user,
      csrf: ctx.state.csrf!,
      error: extra.error,
      notice: extra.notice,
      body: html`<p>Your backend hears here when a user becomes premium, enters grace, expires or is refunded, when a sync run ends, when readiness changes and when a provider webhook fails.</p>
<h2>Your endpoints</h2>
${
  endpoints.data.length === 0
    ? html`<p>No endpoints yet.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Webhook endpoints"><table><caption class="skip">Webhook endpoints</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead><tbody>
${endpoints.data.map((e) => html`<tr><td><a href="/webhook-endpoints/${e.id}">${e.url}</a></td><td>${e.event_types.length ? e.event_types.join(', ') : 'all'}</td><td>${status(e)}</td><td>${formatDate(e.created_at)}</td></tr>`)}
</tbody></table></div>`
}
${
  mayAct(user.role, '/webhook-endpoints')
    ? html`<h2>Add an endpoint</h2>
${createForm(ctx.state.csrf!, extra.values)}`
    : ''
}`,
    });
  };

  const renderOne = async (
    ctx: Koa.Context,
    id: string,
    extra: { error?: string; notice?: string; secret?: string } = {},
  ) => {
    const user = ctx.state.user!;
    // The endpoint, its last 50 deliveries and their attempts: the API's reads, as the person.
    const read = async () => {
      const one = await run<Endpoint>(ctx, getEndpoint as Operation, { id });
      if (!('ok' in one)) return undefined;
      const deliveries = await readThrough<{ data: Delivery[] }>(services, ctx, listOutboundDeliveries as Operation, {
        endpoint_id: id,
        limit: 50,
      });
      const attempts = await readThrough<{ data: Attempt[] }>(services, ctx, recentOutboundAttempts as Operation, {
        delivery_ids: deliveries.data.map((d) => d.id),
      });
      return { e: one.ok, deliveries: deliveries.data, attempts: attempts.data };
    };
    const found = isId(id) ? await read() : undefined;
    if (!found) {
      ctx.status = 404;
      return renderList(ctx, { error: 'No such endpoint.' });
    }
    const { e, deliveries, attempts } = found;
    const csrf = ctx.state.csrf!;
    // A role that may not change endpoints sees no form for it (the server refuses anyway).
    const writable = mayAct(user.role, `/webhook-endpoints/${e.id}`);
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page({
      title: 'Webhook endpoint',
      user,
      csrf,
      error: extra.error,
      notice: extra.notice,
      body: html`${extra.secret ? secretOnce(extra.secret) : ''}
<p><a href="/webhook-endpoints">All endpoints</a></p>
<dl><dt>URL</dt><dd><code>${e.url}</code></dd><dt>Events</dt><dd>${e.event_types.length ? e.event_types.join(', ') : 'all'}</dd>
<dt>Status</dt><dd id="endpoint-status">${status(e)}</dd>
<dt>Support reference</dt><dd><code>${outboundWorkflowId(user.tenant_id, e.id)}</code></dd>
<dt>Secret</dt><dd>${e.secret_rotated_at ? html`rotated ${formatDate(e.secret_rotated_at)}` : 'as created'}${e.previous_secret_expires_at && new Date(e.previous_secret_expires_at) > new Date() ? html`; the previous secret signs too until ${formatDate(e.previous_secret_expires_at)}` : ''}</dd></dl>
${
  writable
    ? html`<form class="inline" method="post" action="/webhook-endpoints/${e.id}/${e.enabled ? 'disable' : 'enable'}">${csrfField(csrf)}<button type="submit">${e.enabled ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="/webhook-endpoints/${e.id}/rotate">${csrfField(csrf)}
<label for="overlap">Keep the old secret signing for (hours)</label>
<input id="overlap" name="overlap_hours" type="number" min="0" max="${ROTATION_OVERLAP_SECONDS.max / 3600}" value="${ROTATION_OVERLAP_SECONDS.default / 3600}" class="narrow" inputmode="numeric">
<button type="submit" class="secondary">Rotate secret</button></form>
<form method="post" action="/webhook-endpoints/${e.id}/delete">${csrfField(csrf)}<button type="submit" class="secondary">Delete endpoint</button></form>`
    : ''
}
<h2>Deliveries</h2>
${
  writable
    ? html`<form method="post" action="/webhook-endpoints/${e.id}/replay-failed">${csrfField(csrf)}
<label for="since">Replay every failed delivery since (UTC)</label>
<input id="since" name="since" type="datetime-local" required>
<button type="submit" class="secondary">Replay failed</button></form>`
    : ''
}
${
  deliveries.length === 0
    ? html`<p>No deliveries yet.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="Deliveries"><table><caption class="skip">Deliveries</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Created</th><th scope="col">Replay</th></tr></thead><tbody>
${deliveries.map(
  (d) => html`<tr><td>${d.type}<br><code>${d.event_id}</code></td>
<td>${d.status}${d.reason ? html`<br>${d.reason}` : ''}${d.status === 'pending' && d.attempts > 0 ? html`<br>next attempt ${formatDate(d.next_attempt_at)}` : ''}</td>
<td><details><summary>${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.last_status_code ? html`, last HTTP ${d.last_status_code}` : ''}</summary><ul>
${attempts.filter((a) => a.delivery_id === d.id).map((a) => html`<li>#${a.attempt} ${formatDate(a.created_at)}: ${a.status_code ? html`HTTP ${a.status_code}` : a.error} in ${a.latency_ms} ms${a.response_excerpt ? html`<pre>${a.response_excerpt}</pre>` : ''}</li>`)}
</ul></details></td>
<td>${formatDate(d.created_at)}</td>
<td>${writable ? html`<form class="inline" method="post" action="/webhook-endpoints/${e.id}/replay/${d.event_id}">${csrfField(csrf)}<button type="submit" class="flush secondary" aria-label="Replay event ${d.event_id}">Replay</button></form>` : '—'}</td></tr>`,
)}
</tbody></table></div>`
}`,
    });
  };

  r.get('/webhook-endpoints', (ctx) => renderList(ctx));

  r.post('/webhook-endpoints', async (ctx) => {
    const form = await readForm(ctx);
    const values = {
      url: (form.get('url') ?? '').trim(),
      description: (form.get('description') ?? '').trim(),
      types: form.getAll('event_types'),
    };
    const made = await run<{ id: string; secret: string }>(ctx, createEndpoint, {
      url: values.url,
      event_types: values.types,
      description: values.description || null,
    });
    if ('error' in made) return renderList(ctx, { error: made.error, values });
    // Post/redirect/get: the secret waits sealed on the session and is shown once by the GET.
    await parkSecret(db, ctx.cookies.get(SESSION_COOKIE)!, { name: made.ok.id, secret: made.ok.secret });
    ctx.status = 303;
    ctx.redirect(`/webhook-endpoints/${made.ok.id}`);
  });

  r.get('/webhook-endpoints/:id', async (ctx) => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    const pending = token ? await takeSecret(db, token) : undefined;
    await renderOne(
      ctx,
      ctx.params.id,
      pending && pending.name === ctx.params.id ? { secret: pending.secret, notice: 'Endpoint saved.' } : {},
    );
  });

  for (const action of ['enable', 'disable'] as const) {
    r.post(`/webhook-endpoints/:id/${action}`, async (ctx) => {
      await readForm(ctx);
      const id = ctx.params.id;
      const done = await run(ctx, updateEndpointOp, { id, enabled: action === 'enable' });
      await renderOne(
        ctx,
        id,
        'error' in done
          ? done
          : {
              notice:
                action === 'enable'
                  ? 'Enabled: new events are delivered again. Replay the failed ones below.'
                  : 'Disabled: it receives nothing until enabled.',
            },
      );
    });
  }

  r.post('/webhook-endpoints/:id/rotate', async (ctx) => {
    const form = await readForm(ctx);
    const id = ctx.params.id;
    // The form asks in hours, the operation in seconds; the operation judges the range.
    const rotated = await run<{ secret: string }>(ctx, rotateEndpointSecretOp, {
      id,
      overlap_seconds: Number(form.get('overlap_hours') ?? '') * 3600,
    });
    if ('error' in rotated) return renderOne(ctx, id, rotated);
    await parkSecret(db, ctx.cookies.get(SESSION_COOKIE)!, { name: id, secret: rotated.ok.secret });
    ctx.status = 303;
    ctx.redirect(`/webhook-endpoints/${id}`);
  });

  r.post('/webhook-endpoints/:id/delete', async (ctx) => {
    await readForm(ctx);
    const gone = await run(ctx, deleteEndpointOp, { id: ctx.params.id });
    await renderList(ctx, 'error' in gone ? gone : { notice: 'Endpoint deleted.' });
  });

  r.post('/webhook-endpoints/:id/replay/:event', async (ctx) => {
    await readForm(ctx);
    const { id, event } = ctx.params;
    const queued = await run(ctx, replayOutboundEvent, { id: event, endpoint_id: id });
    await renderOne(ctx, id, 'error' in queued ? queued : { notice: 'Replay queued, with the same webhook-id.' });
  });

  r.post('/webhook-endpoints/:id/replay-failed', async (ctx) => {
    const form = await readForm(ctx);
    const id = ctx.params.id;
    // datetime-local carries no zone: the form says UTC.
    const since = new Date(`${form.get('since') ?? ''}Z`);
    if (Number.isNaN(since.getTime())) {
      ctx.status = 400;
      return renderOne(ctx, id, { error: 'Give a date and time.' });
    }
    const r2 = await run<{ queued: number; has_more: boolean }>(ctx, replayFailedDeliveries, {
      since: since.toISOString(),
      endpoint_id: id,
    });
    await renderOne(
      ctx,
      id,
      'error' in r2
        ? r2
        : {
            notice: `${r2.ok.queued} failed deliver${r2.ok.queued === 1 ? 'y' : 'ies'} queued again${r2.ok.has_more ? '; more remain, replay again' : ''}.`,
          },
    );
  });

  return r;
}
