import type Router from '@koa/router';
import { exactRouter } from '../router';
import { z } from 'zod';
import type { Services } from '../../operations/services';
import { ApiError } from '../../operations/errors';
import { executeOperation } from '../../operations/execute';
import type { Operation } from '../../operations/types';
import { dashboardActor } from './actor';
import { html, type SafeHtml } from './html';
import { customerHref } from './customers-page';
import { page } from './layout';
import { listAudit } from '../../operations/audit/list';
import { listEntitlements } from '../../operations/entitlements/list';
import { listSubscribers } from '../../operations/subscribers/list';
import { listWebhooks } from '../../operations/webhooks/list';
import { auditPeople } from '../../operations/audit/people';
import { isUuid } from '../../domain/ids';
import { readThrough } from './run-operation';

/**
 * Browsing runs the API's own read operations (same filters, validation, tenant transaction
 * and serializers), so a filter behaves here exactly as on GET /v1/… . Only reads: a person
 * signed in to their tenant may read all of it.
 */
export const BROWSE_PAGES: { path: string; title: string; op: Operation }[] = [
  { path: '/subscribers', title: 'Subscribers', op: listSubscribers as Operation },
  { path: '/entitlements', title: 'Entitlements', op: listEntitlements as Operation },
  { path: '/webhook-deliveries', title: 'Webhook deliveries', op: listWebhooks as Operation },
  { path: '/audit', title: 'Audit trail', op: listAudit as Operation },
];

const PAGING = new Set(['limit', 'offset']);

interface Filter {
  name: string;
  options?: string[];
}

/** The operation's filters, read from its input schema: enums become selects, the rest text fields. */
function filtersOf(op: Operation): Filter[] {
  const shape = (op.input as z.ZodObject).shape as Record<string, z.ZodType>;
  return Object.entries(shape)
    .filter(([name]) => !PAGING.has(name))
    .map(([name, schema]) => {
      const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
      return inner instanceof z.ZodEnum ? { name, options: inner.options.map(String) } : { name };
    });
}

/** A cell; an app user id links to their customer page. */
function cell(column: string, v: unknown): string | SafeHtml {
  if (column === 'app_user_id' && typeof v === 'string' && v) return html`<a href="${customerHref(v)}">${v}</a>`;
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The person an assistant's audit row acted for (db/audit.ts writes it in `detail`). */
const onBehalfOf = (row: Record<string, unknown>) => (row.detail as { on_behalf_of?: unknown } | null)?.on_behalf_of;

/** An owner's or admin's disconnect of a member's assistant names the member (`assistants.disconnect`). */
const disconnected = (row: Record<string, unknown>) =>
  row.action === 'assistants.disconnect' && row.outcome === 'ok'
    ? (row.detail as { member_id?: unknown; name?: unknown } | null)
    : undefined;

export function browsePages(services: Services): Router {
  const r = exactRouter();
  for (const b of BROWSE_PAGES) {
    r.get(b.path, async (ctx) => {
      const filters = filtersOf(b.op);
      const input: Record<string, unknown> = {};
      for (const f of [...filters.map((x) => x.name), 'offset']) {
        const v = ctx.query[f];
        if (typeof v === 'string' && v !== '') input[f] = v;
      }
      let result:
        | { data: Record<string, unknown>[]; pagination: { offset: number; limit: number; total: number | null } }
        | undefined;
      let error: string | undefined;
      try {
        result = (await executeOperation(b.op, dashboardActor(ctx), input, {
          requestId: ctx.state.requestId,
          services,
          log: ctx.state.log,
          surface: 'dashboard',
        })) as typeof result;
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        ctx.status = e.status;
        error = e.detail ?? e.code;
      }
      const rows = result?.data ?? [];
      const columns = rows.length ? Object.keys(rows[0]) : [];
      // The audit trail names the person: a member's email beside their id (removed members too);
      // an assistant's row names the assistant and the person it acted for.
      const userIds = rows.flatMap((x) => {
        const id = x.actor_type === 'user' ? x.actor_id : x.actor_type === 'assistant' ? onBehalfOf(x) : undefined;
        return [id, disconnected(x)?.member_id].filter((v) => isUuid(String(v))).map(String);
      });
      const people = new Map(
        userIds.length
          ? (
              await readThrough<{ data: { id: string; email: string }[] }>(services, ctx, auditPeople as Operation, {
                user_ids: [...new Set(userIds)],
              })
            ).data.map((p) => [p.id, p.email])
          : [],
      );
      const shown = (row: Record<string, unknown>, c: string) => {
        const d = disconnected(row);
        if (c === 'detail' && d) {
          const who = (id: unknown) => people.get(String(id)) ?? 'a former member';
          return `${who(row.actor_id)} disconnected assistant ${String(d.name ?? '')} of ${who(d.member_id)} ${cell(c, row[c])}`;
        }
        if (c !== 'actor_id') return cell(c, row[c]);
        if (row.actor_type === 'user' && people.has(String(row[c])))
          return `${people.get(String(row[c]))} (${cell(c, row[c])})`;
        if (row.actor_type === 'assistant') {
          const person = people.get(String(onBehalfOf(row))) ?? 'a former member';
          return `assistant ${String((row.detail as { assistant?: unknown } | null)?.assistant ?? '')} on behalf of ${person} (${cell(c, row[c])})`;
        }
        return cell(c, row[c]);
      };
      const next =
        result && result.pagination.total !== null && result.pagination.offset + rows.length < result.pagination.total
          ? new URLSearchParams({
              ...(input as Record<string, string>),
              offset: String(result.pagination.offset + rows.length),
            }).toString()
          : undefined;
      ctx.type = 'html';
      ctx.body = page({
        title: b.title,
        user: ctx.state.user,
        csrf: ctx.state.csrf!,
        error,
        body: html`<form method="get" action="${b.path}" role="search" aria-label="Filter ${b.title.toLowerCase()}">
${filters.map(
  (f) => html`<label for="f-${f.name}">${f.name}</label>
${
  f.options
    ? html`<select id="f-${f.name}" name="${f.name}"><option value="">any</option>${f.options.map((o) => html`<option value="${o}" ${input[f.name] === o ? 'selected' : ''}>${o}</option>`)}</select>`
    : html`<input id="f-${f.name}" name="${f.name}" type="text" value="${typeof input[f.name] === 'string' ? (input[f.name] as string) : ''}">`
}`,
)}
<button type="submit">Filter</button></form>
<p>Same filters as <code>GET /v1${b.op.rest?.path ?? ''}</code>.${result?.pagination.total !== null && result ? ` ${result.pagination.total} in all.` : ''}</p>
${
  rows.length === 0
    ? html`<p>Nothing matches.</p>`
    : html`<div class="scroll" role="region" tabindex="0" aria-label="${b.title}"><table><caption class="skip">${b.title}</caption><thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${columns.map((c) => html`<td>${shown(row, c)}</td>`)}</tr>`)}</tbody></table></div>`
}
${next ? html`<p><a href="${b.path}?${next}">Next page</a></p>` : ''}`,
      });
    });
  }
  return r;
}
