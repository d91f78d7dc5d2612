import type Router from '@koa/router';
import { exactRouter } from '../router';
import type Koa from 'koa';
import type { Services } from '../../operations/services';
import type { z } from 'zod';
import { getPaywallDraft, type paywallDraft } from '../../operations/paywall/draft';
import { publishPaywall } from '../../operations/paywall/publish';
import { savePaywallDraft } from '../../operations/paywall/save-draft';
import { readForm } from './form';
import { formatDate, html } from './html';
import { csrfField, page } from './layout';
import { readThrough, runOperation } from './run-operation';
import { mayAct } from './page-access';

/** "sku" or "sku | label", one product per line, in the order the SDK shows them. */
function parseProductLines(text: string): { skus: string[]; labels: Record<string, string> } {
  const skus: string[] = [];
  const labels: Record<string, string> = {};
  for (const line of text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)) {
    const [sku, ...rest] = line.split('|');
    skus.push(sku.trim());
    if (rest.length) labels[sku.trim()] = rest.join('|').trim();
  }
  return { skus, labels };
}

function productLines(config: Record<string, unknown> | undefined): string {
  const skus = (config?.skus as string[] | undefined) ?? [];
  const labels = (config?.labels as Record<string, string> | undefined) ?? {};
  return skus.map((s) => (labels[s] ? `${s} | ${labels[s]}` : s)).join('\n');
}

export function paywallPage(services: Services): Router {
  const r = exactRouter();

  const render = async (
    ctx: Koa.Context,
    msg: { notice?: string; error?: string } = {},
    draft?: Record<string, unknown>,
  ) => {
    const user = ctx.state.user!;
    const row = await readThrough<z.infer<typeof paywallDraft> | null>(services, ctx, getPaywallDraft);
    const config = draft ?? row?.config;
    const state = !row
      ? 'No paywall yet.'
      : !row.has_unpublished_changes
        ? `Published ${formatDate(row.published_at)}; no unpublished changes.`
        : 'This draft has changes that are not published yet.';
    ctx.type = 'html';
    ctx.body = page({
      title: 'Paywall',
      user,
      csrf: ctx.state.csrf!,
      ...msg,
      body: html`<p>${state} <code>GET /v1/paywall</code> serves the published version.</p>
${
  !mayAct(user.role, '/paywall')
    ? html`<dl><dt>Title</dt><dd>${String(config?.title ?? '—')}</dd><dt>Subtitle</dt><dd>${String(config?.subtitle ?? '—')}</dd>
<dt>Products, in order</dt><dd><pre>${productLines(config)}</pre></dd><dt>Default product</dt><dd>${String(config?.default_sku ?? '—')}</dd></dl>`
    : html`<form method="post" action="/paywall">${csrfField(ctx.state.csrf!)}
<label for="pw-title">Title</label><input id="pw-title" name="title" type="text" required maxlength="120" value="${String(config?.title ?? '')}">
<label for="pw-subtitle">Subtitle (optional)</label><input id="pw-subtitle" name="subtitle" type="text" maxlength="200" value="${String(config?.subtitle ?? '')}">
<label for="pw-products">Products, in order</label>
<textarea id="pw-products" name="products" required aria-describedby="pw-products-hint">${productLines(config)}</textarea>
<p id="pw-products-hint">One SKU per line, optionally followed by <code>| label</code>, e.g. <code>premium_annual | Best value</code>.</p>
<label for="pw-default">Default product (optional)</label><input id="pw-default" name="default_sku" type="text" value="${String(config?.default_sku ?? '')}">
<button type="submit">Save draft</button></form>
${row?.has_unpublished_changes ? html`<form method="post" action="/paywall/publish">${csrfField(ctx.state.csrf!)}<button type="submit">Publish</button></form>` : ''}`
}`,
    });
  };

  r.get('/paywall', (ctx) => render(ctx));

  // Both writes are operations (paywall.save_draft, paywall.publish) run as the signed-in
  // person: their rules, their audit row (the person, surface dashboard).
  r.post('/paywall', async (ctx) => {
    const form = await readForm(ctx);
    const { skus, labels } = parseProductLines(form.get('products') ?? '');
    const subtitle = (form.get('subtitle') ?? '').trim();
    const defaultSku = (form.get('default_sku') ?? '').trim();
    const draft = {
      title: form.get('title') ?? '',
      skus,
      ...(subtitle ? { subtitle } : {}),
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(defaultSku ? { default_sku: defaultSku } : {}),
    };
    const saved = await runOperation(services, ctx, savePaywallDraft, draft);
    // A refused draft is shown again as typed, with the reason.
    if ('error' in saved) return render(ctx, { error: saved.error }, draft);
    await render(ctx, { notice: 'Draft saved. Publish it to serve it to the SDK.' });
  });

  r.post('/paywall/publish', async (ctx) => {
    await readForm(ctx);
    const published = await runOperation(services, ctx, publishPaywall, {});
    await render(
      ctx,
      'error' in published
        ? { error: published.error }
        : { notice: 'Published. GET /v1/paywall now serves this version.' },
    );
  });

  return r;
}
