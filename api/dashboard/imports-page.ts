import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { z } from 'zod';
import type { SafeConnection } from '../../db/connections';
import { listConnections } from '../../operations/providers/connections';
import { WEB_PROVIDERS } from '../../domain/providers';
import { createImportOp } from '../../operations/imports/create';
import { getImport } from '../../operations/imports/get';
import { listImports } from '../../operations/imports/list';
import type { importBody, importListRow } from '../../operations/imports/schema';
import type { Services } from '../../operations/services';
import type { Operation } from '../../operations/types';
import { readForm } from './form';
import { readMultipartForm, type FileRefusal } from './multipart';
import { formatDate, html, type SafeHtml } from './html';
import { csrfField, page } from './layout';
import { mayAct } from './page-access';
import { readThrough, runOperation } from './run-operation';

/**
 * The import form carries a file (or its pasted text): the API's bound is 1,000,000 characters
 * (413 past it, docs/reconciliation.md), which urlencoding may triple; the operation refuses past
 * its own bound, the form past this one.
 */
const MAX_IMPORT_FORM_BYTES = 3 * 1024 * 1024 + 64 * 1024;

/** A chosen file the form could not take, in the form's words (its status: what a refusal of the body would be). */
const FILE_REFUSALS: Record<FileRefusal, { status: number; text: string }> = {
  too_large: { status: 413, text: 'The file is larger than 3 MiB. Split it into smaller files and import each.' },
  not_text: {
    status: 400,
    text: 'The file is not a text file in UTF-8. Export it as CSV (UTF-8) and choose it again.',
  },
  unreadable: { status: 400, text: 'The form could not be read. Choose the file again and import it.' },
};

const STATUS_WORDS: Record<string, string> = { running: 'Running', succeeded: 'Finished', failed: 'Stopped' };
const TRIGGER_WORDS: Record<string, string> = {
  request: 'Started by hand or the API',
  connection_proven: 'Started when the connection proved its account',
};
const FILE_FORMATS: { value: string; label: string; header: string }[] = [
  { value: 'store_android', label: 'Google Play purchase tokens', header: 'purchase_token,app_user_id' },
  { value: 'store_ios', label: 'App Store original transaction ids', header: 'original_transaction_id,app_user_id' },
  { value: 'revenuecat', label: 'RevenueCat transactions export', header: 'the export as RevenueCat writes it' },
];

type ListRow = z.infer<typeof importListRow>;
type OneImport = z.infer<typeof importBody>;

function webButtons(proven: Set<string>, csrf: string): SafeHtml {
  return html`<h2>From a web provider</h2>
<p>Reads every subscription of the provider's account through its own list, page by page, under its rate limit. A connection brings its subscribers in by itself the first time it proves its account; import again whenever you like: what is already here stays as it is.</p>
<ul>${WEB_PROVIDERS.map((p) =>
    proven.has(p)
      ? html`<li><form class="inline" method="post" action="/imports/provider">${csrfField(csrf)}<input type="hidden" name="provider" value="${p}"><button type="submit" class="flush">Import subscribers from ${p}</button></form></li>`
      : html`<li>${p}: connect it and verify it on <a href="/providers">Providers</a> first.</li>`,
  )}</ul>`;
}

function fileForm(csrf: string, format = 'store_android', csv = ''): SafeHtml {
  return html`<h2>From a file</h2>
<p>The stores have no list of subscriptions: choose a CSV file of the purchases to import (or paste its lines), one per line after the header, and each is looked up with the store. A line that cannot be imported is refused with its line number and the reason; the rest are imported.</p>
<form method="post" action="/imports/file" enctype="multipart/form-data">${csrfField(csrf)}
<label for="import-format">What the file holds</label>
<select id="import-format" name="format">${FILE_FORMATS.map(
    (f) =>
      html`<option value="${f.value}"${f.value === format ? html` selected` : ''}>${f.label} (header: ${f.header})</option>`,
  )}</select>
<label for="import-file">CSV file (UTF-8, at most 3 MiB)</label>
<input type="file" id="import-file" name="file" accept=".csv,.txt,text/csv,text/plain">
<label for="import-csv">Or its lines (CSV, header first), when no file is chosen</label>
<textarea id="import-csv" name="csv" rows="8" spellcheck="false">${csv}</textarea>
<button type="submit">Import the file</button></form>`;
}

function pastImports(rows: ListRow[], total: number | null): SafeHtml {
  if (rows.length === 0) return html`<h2>Past imports</h2><p>No import yet.</p>`;
  return html`<h2>Past imports</h2><div class="scroll" role="region" tabindex="0" aria-label="Past imports"><table><caption class="skip">Past imports, newest first</caption>
<thead><tr><th scope="col">Started</th><th scope="col">From</th><th scope="col">How</th><th scope="col">Status</th><th scope="col">Imported</th><th scope="col">Refused</th></tr></thead><tbody>
${rows.map(
  (r) =>
    html`<tr><td><a href="/imports/${r.id}">${formatDate(r.created_at)}</a></td><td>${r.provider}</td><td>${TRIGGER_WORDS[r.trigger] ?? r.trigger}</td><td>${STATUS_WORDS[r.status] ?? r.status}</td><td>${r.imported}</td><td>${r.refused_count}</td></tr>`,
)}
</tbody></table></div>${total !== null && total > rows.length ? html`<p>The newest ${rows.length} of ${total}.</p>` : ''}`;
}

function importDetail(i: OneImport): SafeHtml {
  return html`<dl>
<dt>Status</dt><dd id="import-status">${STATUS_WORDS[i.status] ?? i.status}</dd>
<dt>From</dt><dd>${i.provider}</dd>
<dt>How</dt><dd>${TRIGGER_WORDS[i.trigger] ?? i.trigger}</dd>
<dt>Started</dt><dd>${formatDate(i.created_at)}</dd>
<dt>Finished</dt><dd>${formatDate(i.finished_at)}</dd>
<dt>Pages read</dt><dd id="import-pages">${i.pages}</dd>
<dt>Imported</dt><dd id="import-imported">${i.imported}</dd>
<dt>Refused</dt><dd id="import-refused">${i.refused_count}</dd>
</dl>
${i.failure ? html`<p class="error" role="alert">${i.failure}</p>` : ''}
${i.status === 'running' ? html`<p>Still running: <a href="/imports/${i.id}">reload this page</a> to see its progress.</p>` : ''}
${
  i.refused.length
    ? html`<h2>Refused lines</h2><div class="scroll" role="region" tabindex="0" aria-label="Refused lines"><table><caption class="skip">Refused lines and why</caption>
<thead><tr><th scope="col">Line</th><th scope="col">Reason</th></tr></thead><tbody>
${i.refused.map((r) => html`<tr><td>${r.line}</td><td>${r.reason}</td></tr>`)}
</tbody></table></div>${i.refused_count > i.refused.length ? html`<p>The first ${i.refused.length} of ${i.refused_count}.</p>` : ''}`
    : ''
}`;
}

/**
 * Imports (docs/reconciliation.md): bring a provider's existing subscribers in. Every button runs
 * the same operations as REST and the tools (imports.create, imports.list, imports.get) as the
 * signed-in person, so the policy, the audit and the refusals are theirs. A started import
 * redirects to its page (post, redirect, get), which shows its progress and refused lines.
 */
export function importsPage(services: Services): Router {
  const r = exactRouter();

  const renderList = async (ctx: Koa.Context, extra: { error?: string; format?: string; csv?: string } = {}) => {
    const user = ctx.state.user!;
    const listed = await runOperation<{ data: ListRow[]; pagination: { total: number | null } }>(
      services,
      ctx,
      listImports,
      { limit: 50 },
    );
    if ('error' in listed) throw new Error(listed.error);
    const canAct = mayAct(user.role, '/imports');
    const proven = canAct
      ? new Set(
          (await readThrough<{ data: SafeConnection[] }>(services, ctx, listConnections as Operation)).data
            .filter((c) => c.is_active && c.is_default && c.verified_at)
            .map((c) => c.provider as string),
        )
      : new Set<string>();
    ctx.type = 'html';
    ctx.body = page({
      title: 'Imports',
      user,
      csrf: ctx.state.csrf!,
      ...(extra.error ? { error: extra.error } : {}),
      body: html`<p>Bring in the subscribers you already have at a provider or a store, so their access is right before their next renewal reaches us. Imports send no entitlement events to your endpoints: your backend already knows these customers.</p>
${canAct ? html`${webButtons(proven, ctx.state.csrf!)}${fileForm(ctx.state.csrf!, extra.format, extra.csv)}` : ''}
${pastImports(listed.ok.data, listed.ok.pagination.total)}`,
    });
  };

  r.get('/imports', (ctx) => renderList(ctx));

  r.get('/imports/:id', async (ctx) => {
    const found = await runOperation<OneImport>(services, ctx, getImport, { id: ctx.params.id });
    if ('error' in found) return renderList(ctx, { error: 'No such import.' });
    ctx.type = 'html';
    ctx.body = page({
      title: `Import from ${found.ok.provider}`,
      user: ctx.state.user!,
      csrf: ctx.state.csrf!,
      ...(ctx.query.started ? { notice: 'Import started.' } : {}),
      body: html`${importDetail(found.ok)}<p><a href="/imports">All imports</a></p>`,
    });
  });

  const started = (ctx: Koa.Context, id: string) => {
    ctx.status = 303;
    ctx.redirect(`/imports/${id}?started=1`);
  };

  r.post('/imports/provider', async (ctx) => {
    const form = await readForm(ctx);
    const done = await runOperation<{ id: string }>(services, ctx, createImportOp, {
      provider: form.get('provider') ?? '',
    });
    if ('error' in done) return renderList(ctx, { error: done.error });
    started(ctx, done.ok.id);
  });

  r.post('/imports/file', async (ctx) => {
    // The page posts multipart (a chosen file); an urlencoded post (pasted lines only) is taken too.
    const multipart = ctx.is('multipart/form-data')
      ? await readMultipartForm(ctx, MAX_IMPORT_FORM_BYTES)
      : { fields: await readForm(ctx, MAX_IMPORT_FORM_BYTES), file: null, refused: null };
    const form = multipart.fields;
    const format = form.get('format') ?? '';
    if (multipart.refused) {
      ctx.status = FILE_REFUSALS[multipart.refused].status;
      return renderList(ctx, { error: FILE_REFUSALS[multipart.refused].text, format, csv: form.get('csv') ?? '' });
    }
    // A chosen file is imported, else the pasted lines; either keeps its line ends, which the import
    // reads whatever they are.
    const csv = (multipart.file ?? form.get('csv') ?? '').replace(/\r\n/g, '\n');
    const input = format === 'revenuecat' ? { format, csv } : { provider: format, csv };
    const done = await runOperation<{ id: string }>(services, ctx, createImportOp, input);
    // Refused: the form comes back as it was sent (a chosen file is chosen again, not copied into the lines).
    if ('error' in done) return renderList(ctx, { error: done.error, format, csv: form.get('csv') ?? '' });
    started(ctx, done.ok.id);
  });
  return r;
}
