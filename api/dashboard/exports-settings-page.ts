import type Router from '@koa/router';
import type Koa from 'koa';
import type { z } from 'zod';
import { EXPORT_FORMATS } from '../../domain/export-schema';
import { getExportDestination } from '../../operations/export-destination/get';
import { saveExportDestination } from '../../operations/export-destination/save';
import type { destinationBody } from '../../operations/export-destination/schema';
import type { Services } from '../../operations/services';
import type { Operation } from '../../operations/types';
import { exactRouter } from '../router';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { mayAct } from './page-access';
import { runOperation } from './run-operation';

type Destination = z.infer<typeof destinationBody>;

/**
 * Settings → Exports (docs/exports.md, "Scheduled exports to your bucket"): where the daily export
 * goes, its status and last runs. The form is the only way to set the destination's credentials
 * (a dashboard-only operation); they are never shown back, and left empty they stay as stored.
 */
export function exportsSettingsPage(services: Services): Router {
  const r = exactRouter();
  const render = async (ctx: Koa.Context, extra: { notice?: string; error?: string } = {}) => {
    const status = ctx.status;
    const read = await runOperation<Destination>(services, ctx, getExportDestination as Operation, {});
    if (extra.error) ctx.status = status;
    const user = ctx.state.user!;
    const csrf = ctx.state.csrf!;
    const s = 'error' in read ? null : read.ok;
    const d = s?.destination ?? null;
    const writable = mayAct(user.role, '/settings/exports');
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page({
      title: 'Exports',
      user,
      csrf,
      notice: extra.notice,
      error: extra.error ?? ('error' in read ? read.error : undefined),
      body: html`<p>Every day, after the signed digest of the day before, your data goes to your S3-compatible storage: one file per table, and a manifest whose event counts and chain heads must equal the digest's. A run that disagrees stops here until you save again.</p>
${
  d
    ? html`<p id="export-status">Status: <strong>${d.status}</strong>${d.last_error ? html`. Last error: ${d.last_error}` : ''}</p>`
    : html`<p id="export-status">Not set: nothing is exported on a schedule.</p>`
}
${
  s && s.runs.length
    ? html`<div class="scroll" role="region" tabindex="0" aria-label="Runs"><table><caption class="skip">Last runs, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Days from</th><th scope="col">Until</th><th scope="col">Finished</th><th scope="col">Error</th></tr></thead><tbody>
${s.runs.map((x) => html`<tr><td>${x.run}</td><td>${x.status}</td><td>${x.window_start ? formatDate(x.window_start) : 'the beginning'}</td><td>${formatDate(x.window_end)}</td><td>${x.finished_at ? formatDate(x.finished_at) : '—'}</td><td>${x.error ?? ''}</td></tr>`)}
</tbody></table></div>`
    : ''
}
${
  writable
    ? html`<form method="post" action="/settings/exports">${csrfField(csrf)}
<label for="endpoint">Endpoint</label>
<input id="endpoint" name="endpoint" type="url" required value="${d?.endpoint ?? ''}" placeholder="https://s3.eu-west-1.amazonaws.com">
<label for="region">Region</label>
<input id="region" name="region" required value="${d?.region ?? ''}" class="narrow">
<label for="bucket">Bucket</label>
<input id="bucket" name="bucket" required value="${d?.bucket ?? ''}">
<label for="prefix">Folder in the bucket (optional)</label>
<input id="prefix" name="prefix" value="${d?.prefix ?? ''}">
<label for="format">Format</label>
<select id="format" name="format">${EXPORT_FORMATS.map((f) => html`<option value="${f}" ${d?.format === f ? 'selected' : ''}>${f}</option>`)}</select>
<label for="access-key-id">Access key id${d ? ' (leave empty to keep the stored one)' : ''}</label>
<input id="access-key-id" name="access_key_id" autocomplete="off">
<label for="secret-access-key">Secret access key${d ? ' (leave empty to keep the stored one)' : ''}</label>
<input id="secret-access-key" name="secret_access_key" type="password" autocomplete="off">
<button type="submit">Save</button></form>`
    : ''
}`,
    });
  };

  r.get('/settings/exports', async (ctx) => render(ctx));

  r.post('/settings/exports', async (ctx) => {
    const form = await readForm(ctx);
    const text = (name: string) => form.get(name) ?? undefined;
    const saved = await runOperation(services, ctx, saveExportDestination as Operation, {
      endpoint: text('endpoint'),
      region: text('region'),
      bucket: text('bucket'),
      prefix: text('prefix') ?? '',
      format: text('format'),
      access_key_id: text('access_key_id') || undefined,
      secret_access_key: text('secret_access_key') || undefined,
    });
    await render(ctx, 'error' in saved ? { error: saved.error } : { notice: 'Saved.' });
  });

  return r;
}
